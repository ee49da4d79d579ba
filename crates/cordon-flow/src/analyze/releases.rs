//! The policies' releases as the analysis reads them: each `release`'s label computed once, at
//! its most permissive, so that no call is refused here that a release lets through at run time.

use cordon_label::Release;

use super::{Analyzer, Res};

impl Analyzer<'_> {
    /// Computes the policies' releases' labels (constants, by the checker's rules): the most
    /// permissive each may be, so that no call is refused here that a release lets through.
    pub fn compute_releases(&mut self) -> Res<()> {
        let declared = self.decls.declared;
        let mut releases = Vec::with_capacity(declared.releases().len());
        for release in declared.releases() {
            let to = self.label_expr(&release.to, &[])?.lo;
            releases.push(Release { group: release.group.clone(), to, card: release.asks });
        }
        self.releases = releases;
        Ok(())
    }
}
