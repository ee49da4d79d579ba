//! What one Z3 query costs a whole process, Cordon aside: the floor under `cordon check` of a
//! plan with one obligation only the solver proves. With `one`, it makes what the checker makes
//! for its first query (the thread's context, an incremental solver for linear integers and
//! strings, the logic it asks integer queries in too) and asks it the load test's question:
//! with `n >= 0` and `r = n % 5`, is `r + 1 >= 1 || r + 1 < -100`? With `none`, it only starts
//! (the process, with `libz3` loaded). Run both as whole processes:
//!
//! ```sh
//! cargo build --release -p cordon-smt --example z3_floor
//! target/release/examples/z3_floor one; target/release/examples/z3_floor none
//! ```

use z3::ast::Int;
use z3::{SatResult, Solver};

fn main() {
    if std::env::args().nth(1).as_deref() != Some("one") {
        return;
    }
    let solver = Solver::new_for_logic("QF_SLIA").unwrap_or_default();
    let n = Int::new_const("n");
    let r = Int::new_const("r");
    let shown = &r + Int::from_i64(1);
    solver.push();
    solver.assert(n.ge(Int::from_i64(0)));
    solver.assert(r.eq(n.modulo(Int::from_i64(5))));
    solver.assert(!(shown.ge(Int::from_i64(1)) | shown.lt(Int::from_i64(-100))));
    let answer = solver.check();
    solver.pop(1);
    assert_eq!(answer, SatResult::Unsat, "the remainder's bound holds");
}
