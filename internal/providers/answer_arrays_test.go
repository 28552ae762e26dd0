package providers

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// arrayGuard's scan, on bodies read whole and one byte a read: what is an
// array's element, and what is not (string contents, escapes, another
// event's array, an "input" member kept raw).
func TestArrayGuardScan(t *testing.T) {
	over, at := maxAnswerArrayElems+1, maxAnswerArrayElems
	deep := strings.Repeat("[", arrayGuardLevels+3)
	for _, c := range []struct {
		name           string
		body           string
		sse, rawInputs bool
		refused        bool
	}{
		{name: "over the bound", body: fmt.Sprintf(`{"a":[%s]}`, elems("1", over)), refused: true},
		{name: "at the bound", body: fmt.Sprintf(`{"a":[%s]}`, elems("1", at))},
		{name: "nested, over", body: fmt.Sprintf(`[[%s]]`, elems("{}", over)), refused: true},
		{name: "object members are not elements", body: fmt.Sprintf(`{%s}`, elems(`"k":1`, 2*over))},
		{name: "commas in a string", body: fmt.Sprintf(`["%s"]`, strings.Repeat(",", 2*over))},
		{name: "an escaped quote stays in the string", body: fmt.Sprintf(`["\"%s\\"]`, strings.Repeat(",", 2*over))},
		{name: "an escaped backslash ends it", body: fmt.Sprintf(`["\\",%s]`, elems("1", over)), refused: true},
		{name: "past the counted levels", body: deep + elems("1", over), refused: true},
		{name: "sibling arrays each at the bound", body: fmt.Sprintf(`[[%s],[%s]]`, elems("1", at), elems("1", at))},
		{name: "sse: events counted apart", sse: true,
			body: fmt.Sprintf("data: [%s]\n\ndata: [%s]\r\n\r\n", elems("1", at), elems("1", at))},
		{name: "sse: no data line, decoded whole", sse: true,
			body: fmt.Sprintf("{\"choices\":[%s,\n\n%s]}", elems("{}", 3000), elems("{}", 3000)), refused: true},
		{name: "sse: one event", sse: true, body: fmt.Sprintf("data: [%s,\ndata: 1]\n\n", elems("1", at)), refused: true},
		{name: "sse: a line end ends a string", sse: true,
			body: fmt.Sprintf("event: \"\ndata: [%s]\n\n", elems("1", over)), refused: true},
		{name: "input raw", rawInputs: true, body: fmt.Sprintf(`{"input" : {"a":[%s]},"b":1}`, elems("1", over))},
		{name: "input raw, then bounded", rawInputs: true,
			body: fmt.Sprintf(`{"input":{"a":[%s]},"b":[%s]}`, elems("1", over), elems("1", over)), refused: true},
		{name: "input scalar, then bounded", rawInputs: true,
			body: fmt.Sprintf(`[{"input":1},%s]`, elems("1", over)), refused: true},
		{name: "input last member, then bounded", rawInputs: true,
			body: fmt.Sprintf(`[{"input":"x"},%s]`, elems("1", over)), refused: true},
		{name: "an input value is no key", rawInputs: true,
			body: fmt.Sprintf(`{"k":"input","b":[%s]}`, elems("1", over)), refused: true},
		{name: "input counted in a stream", sse: true, rawInputs: false,
			body: fmt.Sprintf("data: {\"input\":[%s]}\n\n", elems("1", over)), refused: true},
	} {
		for _, bytewise := range []bool{false, true} {
			var r io.Reader = strings.NewReader(c.body)
			if bytewise {
				r = iotest.OneByteReader(r)
			}
			g := newArrayGuard(io.NopCloser(r), 1<<20, c.sse, c.rawInputs)
			_, err := io.ReadAll(g)
			var tl *ResponseTooLargeError
			if refused := errors.As(err, &tl) && tl.Elements == maxAnswerArrayElems; refused != c.refused || (!refused && err != nil) {
				t.Errorf("%s (one byte a read %v): err %v, want refused %v", c.name, bytewise, err, c.refused)
			}
		}
	}
}

// What the guard costs: one pass over a stream's bytes (BenchmarkOpenAIStream's
// stream, to set against that benchmark's whole call).
func BenchmarkArrayGuard(b *testing.B) {
	body := benchStream(false)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		g := arrayGuard{sse: true, bol: true}
		if !g.scan(body) {
			b.Fatal("refused")
		}
	}
}
