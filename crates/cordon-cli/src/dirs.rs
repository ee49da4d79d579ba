//! `--dir NAME=PATH[:ro|:rw]`: directories the user grants `cordon run`, `ask` and `chat`,
//! served as the `Fs` capability (`policies/fs.cord`) beside the environments the run names.

use cordon_envs::World;
use cordon_fs::{Fs, FsLimits, Grant};

use crate::Error;

#[derive(Debug, clap::Args)]
pub struct DirArgs {
    /// A directory the plan may use, as NAME=PATH (read-only) or NAME=PATH:rw; repeat for
    /// several. The plan reaches it as `fs.root("NAME")`, and nothing outside it
    #[arg(long = "dir", value_name = "NAME=PATH[:rw]", value_parser = Grant::parse)]
    pub dirs: Vec<Grant>,
}

/// The run's world: the environments named (`github` when neither an environment nor a
/// directory is named), then the directories granted, acting for the environments' principal
/// (or `user` when there is none).
pub fn world(envs: &[String], dirs: &DirArgs) -> Result<World, Error> {
    let mut world = match (envs.is_empty(), dirs.dirs.is_empty()) {
        (true, true) => World::open(&["github".to_string()]),
        (true, false) => Ok(World::empty()),
        (false, _) => World::open(envs),
    }
    .map_err(Error::Usage)?;
    if !dirs.dirs.is_empty() {
        let principal = match world.principal() {
            "" => cordon_fs::DEFAULT_PRINCIPAL.to_string(),
            p => p.to_string(),
        };
        let fs = Fs::open(&dirs.dirs, &principal, FsLimits::default()).map_err(Error::Usage)?;
        world.add(Box::new(fs)).map_err(Error::Usage)?;
    }
    Ok(world)
}
