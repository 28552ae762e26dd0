// Package gostack sizes a short-lived goroutine's stack once, at its start,
// for the deep call it is about to make. It owns nothing else and must not
// import anything of the router's.
//
// A new goroutine starts with the runtime's average stack (a few KiB). A job's
// goroutines go deep at once — an HTTP round trip through go-openai, JSON
// encoding, a pgx batch — and every overflow on the way doubles the stack by
// copying it whole and adjusting each frame on it, several times per job:
// about 6% of the router's CPU under load in `make bench`'s profile. Growing
// the stack while the goroutine still has one frame copies that frame once.
// A goroutine that then waits long (a job on a slow provider) gives the room
// back as any other does: the garbage collector shrinks a stack that uses less
// than a quarter of itself.
package gostack

// Size is the room Reserve makes: the stack ends up at the next power of two
// above it (32 KiB), which the deepest path of a job's attempt fits in. A
// smaller room (12 KiB, a 16 KiB stack, the largest the runtime keeps in its
// per-P cache) left stack growth at 4.2% of the router's CPU instead of 2.2%:
// these goroutines reach 32 KiB anyway, so Reserve allocates the stack they
// would have ended with (from the runtime's shared pool, as before) without
// the copies on the way.
const Size = 24 << 10

// index is always 0; the compiler cannot know that, so the frame below is
// really allocated on the stack and not optimised away.
var index = 0

// Reserve grows the calling goroutine's stack to hold Size more bytes. Call it
// once, first thing in a goroutine that makes a deep call. Each call zeroes
// Size bytes of stack (the frame is real), so it is not free to repeat.
//
//go:noinline
func Reserve() byte {
	var pad [Size]byte
	pad[index] = 1
	return pad[index]
}
