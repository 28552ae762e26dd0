package gostack

import (
	"runtime/debug"
	"testing"
	"unsafe"
)

// A goroutine's stack grows by being copied to a bigger one, which moves its
// locals: the address of a local before and after a call tells whether the
// call grew the stack. These tests read that instead of timing anything.

// deep uses nearly Size bytes of stack.
//
//go:noinline
func deep() byte {
	var pad [Size - 2<<10]byte
	pad[index] = 1
	return pad[index]
}

// movedByDeepCall reports whether deep, called in a new goroutine (after
// Reserve when reserve), moved the goroutine's stack.
func movedByDeepCall(reserve bool) bool {
	// A garbage collection in between could shrink the stack (and move it)
	// at deep's prologue; with none running, only growth moves it.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	moved := make(chan bool)
	go func() {
		var local byte
		if reserve {
			Reserve()
		}
		before := uintptr(unsafe.Pointer(&local))
		deep()
		moved <- uintptr(unsafe.Pointer(&local)) != before
	}()
	return <-moved
}

func TestReserveMakesRoomForADeepCall(t *testing.T) {
	if movedByDeepCall(true) {
		t.Fatal("after Reserve, a call using nearly Size bytes of stack still grew the goroutine's stack")
	}
}

// The control: without Reserve the same call does grow a new goroutine's
// stack, so the test above would fail if Reserve did nothing (or were
// optimised away).
func TestWithoutReserveADeepCallGrowsTheStack(t *testing.T) {
	if !movedByDeepCall(false) {
		t.Fatal("a new goroutine's stack already held a call of nearly Size bytes; the test above proves nothing with so large a starting stack")
	}
}
