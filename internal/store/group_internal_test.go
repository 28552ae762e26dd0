package store

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// goroutineID is the running goroutine's number, from its stack header.
func goroutineID() int {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := bytes.Fields(buf)
	id, _ := strconv.Atoi(string(f[1]))
	return id
}

type groupItem struct {
	done chan struct{}
	ran  int // the goroutine that executed it
}

// Issue 11: a lone caller executes its own batch on its own goroutine (no
// hand-off to a leader goroutine and back), and items queued meanwhile still
// go out, batched, under a leader it starts.
func TestGroupLoneCallerLeadsItself(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var batches [][]*groupItem
	g := group[groupItem]{size: 8, maxLeaders: 2}
	g.exec = func(_ context.Context, batch []*groupItem) {
		id := goroutineID()
		mu.Lock()
		first := len(batches) == 0
		batches = append(batches, batch)
		mu.Unlock()
		if first {
			close(started)
			<-release // hold the first batch while others queue up
		}
		for _, it := range batch {
			it.ran = id
			close(it.done)
		}
	}
	lone := &groupItem{done: make(chan struct{})}
	queued := make(chan struct{})
	others := make([]*groupItem, 5)
	go func() {
		<-started // the lone caller's batch is executing: queue others
		for i := range others {
			others[i] = &groupItem{done: make(chan struct{})}
			g.enqueue(others[i])
		}
		close(queued)
		close(release)
	}()
	me := goroutineID()
	g.enqueue(lone)
	select {
	case <-lone.done:
	default:
		t.Fatal("enqueue returned before the lone caller's batch ran")
	}
	if lone.ran != me {
		t.Fatalf("the lone caller's batch ran on goroutine %d, not the caller's %d", lone.ran, me)
	}
	<-queued
	for _, it := range others {
		<-it.done
	}
	mu.Lock()
	defer mu.Unlock()
	if len(batches) != 2 || len(batches[1]) != len(others) {
		t.Fatalf("batches of %v, want the lone caller's then the %d queued meanwhile together", sizes(batches), len(others))
	}
	if others[0].ran == me {
		t.Fatal("the queued items ran on the lone caller's goroutine: it must hand over once its own batch is done")
	}
}

func sizes(bs [][]*groupItem) []int {
	out := make([]int, len(bs))
	for i, b := range bs {
		out[i] = len(b)
	}
	return out
}

// A caller that became the leader but, before taking its batch, had its item
// taken by a leader goroutine that a full batch of later callers started
// leaves without counting its leadership twice: leaders is back to 0, and a
// later lone caller still runs its own batch (it used to wait forever for a
// full batch once leaders had gone negative).
func TestGroupLeaderWhoseItemWasTakenLeavesOnce(t *testing.T) {
	g := &group[groupItem]{size: 4, maxLeaders: 2}
	g.exec = func(_ context.Context, batch []*groupItem) {
		for _, it := range batch {
			close(it.done)
		}
	}
	lone := &groupItem{done: make(chan struct{})}
	others := make([]*groupItem, 3)
	g.beforeSelfBatch = func() {
		g.beforeSelfBatch = nil // only for the first caller
		for i := range others {
			others[i] = &groupItem{done: make(chan struct{})}
			g.enqueue(others[i]) // the third fills a batch: a leader goroutine takes all four
		}
		<-lone.done
	}
	g.enqueue(lone)
	for _, it := range others {
		<-it.done
	}
	// Wait for the leader goroutine to leave (it does once the queue is empty).
	for {
		g.mu.Lock()
		n := g.leaders
		g.mu.Unlock()
		if n <= 0 {
			if n != 0 {
				t.Fatalf("leaders = %d after everything ran, want 0", n)
			}
			break
		}
		runtime.Gosched()
	}
	later := &groupItem{done: make(chan struct{})}
	g.enqueue(later)
	select {
	case <-later.done:
	default:
		t.Fatal("a later lone caller's batch did not run at once")
	}
}
