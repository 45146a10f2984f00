// SPDX-License-Identifier: GPL-2.0

// gostack: Go's runtime moving and walking its stacks under a tracer
// (issue 39): goroutine stacks grown by deep recursion (copied), garbage
// collection under allocation pressure (stacks scanned), panic and
// recover, runtime.Callers. Traced or not, it writes the same line to OUT.
//
//	gostack OUT
package main

import (
	"fmt"
	"os"
	"runtime"
)

//go:noinline
func callers() int {
	pcs := make([]uintptr, 64)
	return runtime.Callers(0, pcs)
}

//go:noinline
func recurse(n int) int {
	var buf [64]byte
	buf[n%64] = byte(n)
	if n == 0 {
		return int(buf[0]) + callers()
	}
	return recurse(n-1) + int(buf[n%64])
}

//go:noinline
func thrower(i int) int {
	if i%3 == 0 {
		panic("three")
	}
	return i
}

//go:noinline
func mayPanic(i int) (r int) {
	defer func() {
		if recover() != nil {
			r = -1
		}
	}()
	return thrower(i)
}

//go:noinline
func alloc(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		b := make([]byte, 4096)
		b[i%4096] = byte(i)
		s += int(b[i%4096])
	}
	return s
}

func main() {
	sum := 0
	done := make(chan int)
	for g := 0; g < 4; g++ {
		go func() {
			s := 0
			for i := 0; i < 10; i++ {
				s += recurse(3000) + mayPanic(i) + alloc(500)
			}
			done <- s
		}()
	}
	for g := 0; g < 4; g++ {
		sum += <-done
	}
	runtime.GC()
	if err := os.WriteFile(os.Args[1], []byte(fmt.Sprintf("go sum=%d\n", sum)), 0o644); err != nil {
		os.Exit(1)
	}
}
