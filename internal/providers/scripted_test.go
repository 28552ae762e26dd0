package providers

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"
)

func userReq(attempt, content string) *Request {
	return &Request{AttemptID: attempt, JobID: "job", Messages: []Message{{Role: "user", Content: content}}}
}

func TestScriptedDefault(t *testing.T) {
	s := NewScripted(ScriptedConfig{Name: "demo"})
	for i := 1; i <= 2; i++ {
		resp, err := s.Complete(context.Background(), userReq("a", "12345678"))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Content != "{}" || resp.ResponseID != fmt.Sprintf("scripted-demo-%d", i) || resp.Model != "scripted" ||
			resp.FinishReason != "stop" || resp.Created.IsZero() {
			t.Fatalf("%+v", resp)
		}
		if resp.Usage != (Usage{PromptTokens: 2, CompletionTokens: 1, TotalTokens: 3}) {
			t.Fatalf("usage %+v", resp.Usage)
		}
	}
	if s.Name() != "demo" || s.Calls() != 2 || s.CallsFor("a") != 2 || s.CallsFor("b") != 0 {
		t.Fatalf("counts %d %d", s.Calls(), s.CallsFor("a"))
	}
}

func TestScriptedStepsInOrderLastRepeats(t *testing.T) {
	s := NewScripted(ScriptedConfig{Model: "m", Steps: []Step{
		{Status: 503, RetryAfter: 2 * time.Second},
		{Output: `{"n":2}`, Model: "m2", Usage: &Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}},
		{Output: `{"n":3}`},
	}})
	_, err := s.Complete(context.Background(), userReq("a1", "x"))
	if e := assertKind(t, err, KindUnavailable, FaultProvider, ActionRetry, false); e.RetryAfter != 2*time.Second || e.StatusCode != 503 || e.Provider != "scripted" {
		t.Fatalf("%+v", e)
	}
	resp, err := s.Complete(context.Background(), userReq("a2", "x"))
	if err != nil || resp.Content != `{"n":2}` || resp.Model != "m2" || resp.Usage.CompletionTokens != 2 {
		t.Fatalf("%+v %v", resp, err)
	}
	for range 3 {
		resp, err = s.Complete(context.Background(), userReq("a3", "x"))
		if err != nil || resp.Content != `{"n":3}` || resp.Model != "m" {
			t.Fatalf("%+v %v", resp, err)
		}
	}
}

func TestScriptedErrorAndStatusSteps(t *testing.T) {
	orig := &Error{Kind: KindContentPolicy, Message: "nope"}
	s := NewScripted(ScriptedConfig{Name: "s", Steps: []Step{{Error: orig, RetryAfter: time.Second}}})
	_, err := s.Complete(context.Background(), userReq("a", "x"))
	e := assertKind(t, err, KindContentPolicy, FaultCaller, ActionStop, false)
	if e == orig || e.Provider != "s" || orig.Provider != "" || e.RetryAfter != time.Second {
		t.Fatalf("error not copied and filled: %+v (orig %+v)", e, orig)
	}

	rows := []struct {
		status int
		kind   Kind
	}{{400, KindBadRequest}, {401, KindAuth}, {404, KindModelNotFound}, {429, KindRateLimited}, {500, KindServerError}, {504, KindGatewayTimeout}}
	for _, r := range rows {
		s := NewScripted(ScriptedConfig{Steps: []Step{{Status: r.status}}})
		_, err := s.Complete(context.Background(), userReq("a", "x"))
		if e := mustError(t, err); e.Kind != r.kind || e.StatusCode != r.status {
			t.Errorf("status %d: %+v", r.status, e)
		}
	}
	s = NewScripted(ScriptedConfig{Steps: []Step{{Status: 200, Output: "ok"}}})
	if resp, err := s.Complete(context.Background(), userReq("a", "x")); err != nil || resp.Content != "ok" {
		t.Fatalf("2xx status: %v %v", resp, err)
	}
}

func TestScriptedRespond(t *testing.T) {
	s := NewScripted(ScriptedConfig{
		Steps: []Step{{Status: 500}},
		Respond: func(call int, req *Request) Step {
			return Step{Output: fmt.Sprintf(`{"call":%d,"attempt":%q}`, call, req.AttemptID)}
		},
	})
	resp, err := s.Complete(context.Background(), userReq("a9", "x"))
	if err != nil || resp.Content != `{"call":1,"attempt":"a9"}` {
		t.Fatalf("%+v %v", resp, err)
	}
}

func TestScriptedHangAndLookup(t *testing.T) {
	reached := make(chan int, 1)
	s := NewScripted(ScriptedConfig{
		Steps:  []Step{{Hang: true}, {Output: `{"ok":true}`}},
		OnCall: func(call int, _ *Request) { reached <- call },
	})

	// Hang + cancellation: synchronise on OnCall, then cancel.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := s.Complete(ctx, userReq("hung", "x")); done <- err }()
	if call := <-reached; call != 1 {
		t.Fatalf("call %d", call)
	}
	cancel()
	assertKind(t, <-done, KindCancelled, FaultRouter, ActionStop, false)

	// Hang + deadline: outcome unknown, then reconciliation finds the answer.
	s2 := NewScripted(ScriptedConfig{Steps: []Step{{Hang: true}}})
	dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer dcancel()
	_, err := s2.Complete(dctx, userReq("hung", "x"))
	assertKind(t, err, KindTimeout, FaultNetwork, ActionFailover, true)
	if _, found, err := s2.Lookup(context.Background(), "hung"); found || err != nil {
		t.Fatal("hung call found before SetLookupResult")
	}
	s2.SetLookupResult("hung", &Response{Content: `{"late":1}`})
	if resp, found, err := s2.Lookup(context.Background(), "hung"); !found || err != nil || resp.Content != `{"late":1}` {
		t.Fatalf("lookup: %+v %v %v", resp, found, err)
	}

	// Completed calls are recorded for Lookup.
	resp, err := s.Complete(context.Background(), userReq("done", "x"))
	if err != nil {
		t.Fatal(err)
	}
	got, found, err := s.Lookup(context.Background(), "done")
	if !found || err != nil || !reflect.DeepEqual(*got, *resp) {
		t.Fatalf("lookup done: %+v %v %v", got, found, err)
	}
	if _, found, _ := s.Lookup(context.Background(), "missing"); found {
		t.Fatal("found missing")
	}
}

func TestScriptedLatency(t *testing.T) {
	reached := make(chan struct{}, 1)
	s := NewScripted(ScriptedConfig{
		Steps:  []Step{{Latency: time.Hour}},
		OnCall: func(int, *Request) { reached <- struct{}{} },
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-reached; cancel() }()
	_, err := s.Complete(ctx, userReq("a", "x"))
	assertKind(t, err, KindCancelled, FaultRouter, ActionStop, false)

	s = NewScripted(ScriptedConfig{Steps: []Step{{Latency: time.Millisecond, Output: "x"}}})
	if resp, err := s.Complete(context.Background(), userReq("a", "x")); err != nil || resp.Content != "x" {
		t.Fatalf("%v %v", resp, err)
	}

	// A context already ended: the call never started, so the outcome is known.
	done, cancelDone := context.WithTimeout(context.Background(), 0)
	defer cancelDone()
	_, err = s.Complete(done, userReq("a", "x"))
	assertKind(t, err, KindTimeout, FaultNetwork, ActionFailover, false)
}

func TestScriptedStreamFlags(t *testing.T) {
	rows := []struct {
		step Step
		kind Kind
	}{
		{Step{Output: `{"abcdefgh":12345678}`, StreamCut: true}, KindStreamCut},
		{Step{Output: `{"abcdefgh":12345678}`, StreamStall: true}, KindStreamStalled},
		{Step{Output: `{"abcdefgh":12345678}`, StreamMalformed: true}, KindStreamMalformed},
	}
	for _, r := range rows {
		s := NewScripted(ScriptedConfig{Steps: []Step{r.step}})
		var d deltaLog
		resp, err := s.CompleteStream(context.Background(), userReq("a", "x"), d.add)
		if resp != nil {
			t.Fatal("response for a broken stream")
		}
		// Part of the answer came before the failure: the outcome is known
		// (Received), as the real adapters mark it. It was not.
		if e := assertKind(t, err, r.kind, FaultProvider, ActionFailover, false); !e.Received {
			t.Errorf("%s: not marked Received after delivering part of the answer", r.kind)
		}
		if got := d.joined(); got != r.step.Output[:len(r.step.Output)/2] {
			t.Errorf("%s: delivered %q", r.kind, got)
		}
		if _, err := s.Complete(context.Background(), userReq("b", "x")); mustError(t, err).Kind != r.kind || !mustError(t, err).Received {
			t.Errorf("Complete: %v (Received %v)", err, mustError(t, err).Received)
		}
		if _, found, _ := s.Lookup(context.Background(), "a"); found {
			t.Error("broken stream recorded as completed")
		}
	}

	s := NewScripted(ScriptedConfig{Steps: []Step{{Output: `{"abcdefgh":12345678}`}}})
	var d deltaLog
	resp, err := s.CompleteStream(context.Background(), userReq("a", "x"), d.add)
	if err != nil || d.joined() != resp.Content || len(d.deltas) < 2 {
		t.Fatalf("%v %v %q", resp, err, d.deltas)
	}
}

func TestScriptedDirectives(t *testing.T) {
	rows := []struct {
		name    string
		content string
		check   func(t *testing.T, resp *Response, err error)
	}{
		{"status and retry_after", "please\n#scripted: status=503 retry_after=2s", func(t *testing.T, _ *Response, err error) {
			if e := assertKind(t, err, KindUnavailable, FaultProvider, ActionRetry, false); e.RetryAfter != 2*time.Second {
				t.Fatalf("retry after %v", e.RetryAfter)
			}
		}},
		{"retry_after in seconds", "#scripted: status=429 retry_after=3", func(t *testing.T, _ *Response, err error) {
			if e := mustError(t, err); e.Kind != KindRateLimited || e.RetryAfter != 3*time.Second {
				t.Fatalf("%+v", e)
			}
		}},
		{"latency and output with spaces", `  #scripted: latency=1ms output={"a": 1, "b": "x y"}`, func(t *testing.T, resp *Response, err error) {
			if err != nil || resp.Content != `{"a": 1, "b": "x y"}` {
				t.Fatalf("%+v %v", resp, err)
			}
		}},
		{"model", "#scripted: model=big-model output={}", func(t *testing.T, resp *Response, err error) {
			if err != nil || resp.Model != "big-model" || resp.Content != "{}" {
				t.Fatalf("%+v %v", resp, err)
			}
		}},
		{"error kind", "#scripted: error=content_policy", func(t *testing.T, _ *Response, err error) {
			if e := assertKind(t, err, KindContentPolicy, FaultCaller, ActionStop, false); e.Provider != "scripted" {
				t.Fatalf("%+v", e)
			}
		}},
		{"cut", "#scripted: cut", func(t *testing.T, _ *Response, err error) {
			assertKind(t, err, KindStreamCut, FaultProvider, ActionFailover, false)
		}},
		{"stall", "#scripted: stall", func(t *testing.T, _ *Response, err error) {
			assertKind(t, err, KindStreamStalled, FaultProvider, ActionFailover, false)
		}},
		{"malformed", "#scripted: malformed", func(t *testing.T, _ *Response, err error) {
			assertKind(t, err, KindStreamMalformed, FaultProvider, ActionFailover, false)
		}},
		{"lines merge", "#scripted: model=m1\ntext\n#scripted: output=[1]", func(t *testing.T, resp *Response, err error) {
			if err != nil || resp.Model != "m1" || resp.Content != "[1]" {
				t.Fatalf("%+v %v", resp, err)
			}
		}},
		{"unknown directive", "#scripted: explode", func(t *testing.T, _ *Response, err error) {
			assertKind(t, err, KindBadRequest, FaultCaller, ActionStop, false)
		}},
		{"bad status", "#scripted: status=abc", func(t *testing.T, _ *Response, err error) {
			assertKind(t, err, KindBadRequest, FaultCaller, ActionStop, false)
		}},
		{"bad error kind", "#scripted: error=nonsense", func(t *testing.T, _ *Response, err error) {
			assertKind(t, err, KindBadRequest, FaultCaller, ActionStop, false)
		}},
		{"flag with value", "#scripted: hang=1", func(t *testing.T, _ *Response, err error) {
			assertKind(t, err, KindBadRequest, FaultCaller, ActionStop, false)
		}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			// The script would answer 500: the directive overrides it.
			s := NewScripted(ScriptedConfig{Steps: []Step{{Status: 500}}})
			resp, err := s.Complete(context.Background(), userReq("a", r.content))
			r.check(t, resp, err)
		})
	}

	t.Run("hang", func(t *testing.T) {
		s := NewScripted(ScriptedConfig{})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		_, err := s.Complete(ctx, userReq("a", "#scripted: hang"))
		assertKind(t, err, KindTimeout, FaultNetwork, ActionFailover, true)
	})

	t.Run("adjusting directives keep the scripted outcome", func(t *testing.T) {
		s := NewScripted(ScriptedConfig{Name: "primary", Steps: []Step{{Output: `{"ok":true}`}}})
		resp, err := s.Complete(context.Background(), userReq("a", "#scripted: latency=1ms model=m9"))
		if err != nil || resp.Content != `{"ok":true}` || resp.Model != "m9" {
			t.Fatalf("%+v %v", resp, err)
		}
	})

	t.Run("addressed directives apply to that provider only", func(t *testing.T) {
		msg := "text\n#scripted@primary: status=503"
		primary := NewScripted(ScriptedConfig{Name: "primary", Steps: []Step{{Output: `{"ok":1}`}}})
		fallback := NewScripted(ScriptedConfig{Name: "fallback", Steps: []Step{{Output: `{"ok":2}`}}})
		_, err := primary.Complete(context.Background(), userReq("a", msg))
		assertKind(t, err, KindUnavailable, FaultProvider, ActionRetry, false)
		resp, err := fallback.Complete(context.Background(), userReq("a", msg))
		if err != nil || resp.Content != `{"ok":2}` {
			t.Fatalf("fallback: %+v %v", resp, err)
		}
	})

	t.Run("only the last user message counts", func(t *testing.T) {
		s := NewScripted(ScriptedConfig{})
		req := &Request{Messages: []Message{
			{Role: "user", Content: "#scripted: status=500"},
			{Role: "assistant", Content: "#scripted: status=500"},
			{Role: "user", Content: "plain"},
		}}
		if resp, err := s.Complete(context.Background(), req); err != nil || resp.Content != "{}" {
			t.Fatalf("%+v %v", resp, err)
		}
	})
}

func TestScriptedRequestsAreCopies(t *testing.T) {
	var seen []*Request
	var mu sync.Mutex
	s := NewScripted(ScriptedConfig{OnCall: func(_ int, r *Request) { mu.Lock(); seen = append(seen, r); mu.Unlock() }})
	temp := float32(0.5)
	req := userReq("a", "hello")
	req.Temperature = &temp
	req.ResponseFormat = &ResponseFormat{Type: "json_schema", Schema: []byte(`{}`)}
	if _, err := s.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	req.Messages[0].Content = "changed"
	temp = 1
	got := s.Requests()
	if len(got) != 1 || got[0].Messages[0].Content != "hello" || *got[0].Temperature != 0.5 || len(seen) != 1 {
		t.Fatalf("requests not copied: %+v", got[0])
	}
	got[0].Messages[0].Content = "mutated"
	got[0].ResponseFormat.Schema[0] = 'x'
	if again := s.Requests(); again[0].Messages[0].Content != "hello" || string(again[0].ResponseFormat.Schema) != "{}" {
		t.Fatal("Requests returned shared state")
	}
}

func TestScriptedConcurrent(t *testing.T) {
	s := NewScripted(ScriptedConfig{Steps: []Step{{Output: "a"}, {Status: 503}}})
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("att-%d", i%4)
			s.CompleteStream(context.Background(), userReq(id, "x"), func(string) {})
			s.Lookup(context.Background(), id)
			s.Requests()
		}()
	}
	wg.Wait()
	if s.Calls() != 32 || s.CallsFor("att-0") != 8 || len(s.Requests()) != 32 {
		t.Fatalf("calls %d att-0 %d", s.Calls(), s.CallsFor("att-0"))
	}
}
