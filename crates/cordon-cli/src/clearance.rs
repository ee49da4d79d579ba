//! The `--clearance` flags: what a model (the one that fills holes, a calling agent's, the
//! intent check's) may be shown.

/// A model's clearance: showing it a value is a flow of that value to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Clearance {
    Public,
    User,
}

impl From<Clearance> for cordon::Clearance {
    fn from(clearance: Clearance) -> cordon::Clearance {
        match clearance {
            Clearance::Public => cordon::Clearance::Public,
            Clearance::User => cordon::Clearance::User,
        }
    }
}
