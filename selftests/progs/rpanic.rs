// SPDX-License-Identifier: GPL-2.0
//! rpanic: Rust panics unwound through functions a tracer probes with
//! their returns, caught by catch_unwind (issue 39). Traced or not, it
//! writes the same line to OUT. ROUNDS (30 unless given) calls of
//! rcatcher(), a third of them catching a panic, as many caught in main().
//!
//!   rpanic OUT [ROUNDS]
use std::panic;

#[no_mangle]
#[inline(never)]
pub fn rthrower(i: u64) -> u64 {
    if i % 3 == 0 {
        panic!("three");
    }
    i
}

#[no_mangle]
#[inline(never)]
pub fn rmiddle(i: u64) -> u64 {
    rthrower(unsafe { std::ptr::read_volatile(&i) }) + 1
}

#[no_mangle]
#[inline(never)]
pub fn rcatcher(i: u64) -> u64 {
    let r = panic::catch_unwind(|| rmiddle(i)).unwrap_or(100);
    r + rmiddle(1)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let out = args.next().expect("usage: rpanic OUT [ROUNDS]");
    let rounds: u64 = args.next().map_or(30, |n| n.parse().expect("ROUNDS: a number"));
    panic::set_hook(Box::new(|_| {}));
    let (mut sum, mut caught) = (0u64, 0u64);
    for i in 0..rounds {
        match panic::catch_unwind(|| rmiddle(i)) {
            Ok(v) => sum += v,
            Err(_) => caught += 1,
        }
        sum += rcatcher(i);
    }
    std::fs::write(out, format!("rust sum={} caught={}\n", sum, caught)).unwrap();
}
