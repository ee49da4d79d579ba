//! The policies' releases as the analysis reads them: each `release`'s label computed once, at
//! its most permissive, so that no call is refused here that a release lets through at run time.

use cordon_label::Release;

use super::{Analyzer, Res};

impl Analyzer<'_> {
    /// Computes the policies' releases' labels (constants, by the checker's rules): the most
    /// permissive each may be, so that no call is refused here that a release lets through.
    pub fn compute_releases(&mut self) -> Res<()> {
        let decls = self.decls;
        let mut releases = Vec::with_capacity(decls.releases.len());
        for (group, to, card) in &decls.releases {
            let to = self.label_expr(to, &[])?.lo;
            releases.push(Release { group: group.to_string(), to, card: *card });
        }
        self.releases = releases;
        Ok(())
    }
}
