#![allow(clippy::unwrap_used)]
use cordon_smt::*;
fn rss() -> String { std::fs::read_to_string("/proc/self/status").unwrap().lines().find(|l| l.starts_with("VmRSS")).unwrap().to_string() }
#[test]
fn soak() {
    let mut solver = Solver::new(5000);
    let t = std::time::Instant::now();
    for i in 0..60000i64 {
        let x = Term::Var(format!("x{}", i % 7), Sort::Int);
        let s = Term::Var("s".into(), Sort::String);
        let mut hyps = vec![Term::Lt(Box::new(Term::Int(i)), Box::new(x.clone()))];
        if i % 3 == 0 { hyps.push(Term::Eq(Box::new(s.clone()), Box::new(Term::Str(format!("lit{i}"))))); }
        let goal = Term::Lt(Box::new(Term::Int(i + (i % 2))), Box::new(x));
        let goal = if i % 3 == 0 { Term::And(vec![goal, Term::Lt(Box::new(Term::Int(0)), Box::new(Term::StrLen(Box::new(s))))]) } else { goal };
        let q = Query { funcs: vec![], hypotheses: hyps, goal };
        let a = solver.check(&q);
        assert_eq!(a == Answer::Valid, i % 2 == 0, "{i}: {a:?}");
        solver.clear_cache();
        if i % 10000 == 0 { eprintln!("{i} {:?} {}", t.elapsed(), rss()); }
    }
    eprintln!("end {:?} {}", t.elapsed(), rss());
}
