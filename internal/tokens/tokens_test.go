package tokens_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/pkoukk/tiktoken-go"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/tokens"
)

var cacheDir string

// TestMain makes any download impossible: tiktoken-go's default loader would
// fetch the BPE files over HTTP and cache them in TIKTOKEN_CACHE_DIR. The proxy
// points nowhere and the cache dir must still be empty at the end.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tiktoken-cache")
	if err != nil {
		panic(err)
	}
	cacheDir = dir
	for k, v := range map[string]string{
		"TIKTOKEN_CACHE_DIR": dir, "HTTP_PROXY": "http://127.0.0.1:1", "HTTPS_PROXY": "http://127.0.0.1:1",
		"http_proxy": "http://127.0.0.1:1", "https_proxy": "http://127.0.0.1:1", "NO_PROXY": "", "no_proxy": "",
	} {
		os.Setenv(k, v)
	}
	code := m.Run()
	if entries, _ := os.ReadDir(dir); code == 0 && len(entries) > 0 {
		fmt.Fprintf(os.Stderr, "tokenizer files were downloaded into %s: the offline loader was not used\n", dir)
		code = 1
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

const triageInput = `{"subject":"Charged twice for March — need a refund","customer_tier":"pro","body":"Hello,\n\nI was billed twice for my March subscription (invoice INV-2024-0042 and INV-2024-0043, both €49.99). Card ending 4242. Please refund the duplicate and confirm it won't happen again. Our finance team closes the books on Friday, so I'd appreciate a quick answer.\n\nThanks,\nMaría"}`

const invoiceInput = `{"text":"ACME Consulting GmbH\nHauptstraße 5, 10115 Berlin\nVAT ID DE123456789\n\nINVOICE INV-2024-0042\nIssue date: 1 March 2024\nDue date: 31 March 2024\n\nBill to: Globex Corp, 1 Infinite Loop, Springfield\n\nDescription                Qty   Unit price     Amount\nConsulting, March           12     150.00 EUR   1,800.00 EUR\nTravel expenses              1     312.40 EUR     312.40 EUR\nLicence seats                3      49.99 EUR     149.97 EUR\n\nTotal                                         2,262.37 EUR\n\nPayment by bank transfer to IBAN DE89 3704 0044 0532 0130 00 within 30 days.\nThank you for your business!"}`

func rendered(tb testing.TB, name, input string) []providers.Message {
	tb.Helper()
	set, err := prompt.LoadDir("../../prompts")
	if err != nil {
		tb.Fatal(err)
	}
	p, err := set.Get(name, "")
	if err != nil {
		tb.Fatal(err)
	}
	msgs, err := p.Render(json.RawMessage(input))
	if err != nil {
		tb.Fatal(err)
	}
	return msgs
}

func TestCountMessages_MatchesTiktoken(t *testing.T) {
	// Count through the package first: it installs the offline loader that the
	// direct tiktoken calls below then share.
	if _, err := tokens.CountText(tokens.Cl100kBase, "warm up"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, input string }{{"triage", triageInput}, {"invoice", invoiceInput}} {
		msgs := rendered(t, tc.name, tc.input)
		for _, enc := range []string{tokens.Cl100kBase, tokens.O200kBase} {
			tk, err := tiktoken.GetEncoding(enc)
			if err != nil {
				t.Fatal(err)
			}
			want := 3 // reply priming
			for _, m := range msgs {
				want += 3 + len(tk.Encode(m.Role, nil, nil)) + len(tk.Encode(m.Content, nil, nil))
			}
			got, err := tokens.CountMessages(enc, msgs)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s/%s: CountMessages = %d, tiktoken says %d", tc.name, enc, got, want)
			}
			t.Logf("%s/%s: %d prompt tokens", tc.name, enc, got)
		}
	}
}

func TestCountText_KnownValues(t *testing.T) {
	for _, tc := range []struct {
		enc, text string
		want      int
	}{
		{tokens.Cl100kBase, "tiktoken is great!", 6}, // OpenAI cookbook
		{tokens.Cl100kBase, "hello world", 2},
		{tokens.O200kBase, "hello world", 2},
		{tokens.Cl100kBase, "", 0},
	} {
		got, err := tokens.CountText(tc.enc, tc.text)
		if err != nil || got != tc.want {
			t.Errorf("CountText(%s, %q) = %d, %v; want %d", tc.enc, tc.text, got, err, tc.want)
		}
	}
	// Special-token text is ordinary text to a chat API: several tokens, no panic.
	if n, err := tokens.CountText(tokens.O200kBase, "<|endoftext|>"); err != nil || n < 2 {
		t.Errorf("special token text counted as %d, %v", n, err)
	}
	if _, err := tokens.CountText("gpt2-ish", "x"); err == nil || !strings.Contains(err.Error(), "use one of o200k_base") {
		t.Errorf("unknown encoding: %v", err)
	}
}

func TestEncodingForModel(t *testing.T) {
	for _, tc := range []struct{ enc, model, want string }{
		{"", "gpt-4o", tokens.O200kBase},
		{"", "gpt-4o-mini", tokens.O200kBase},
		{"", "gpt-4o-2024-08-06", tokens.O200kBase},
		{"", "openai/gpt-4.1-mini", tokens.O200kBase},
		{"", "o3-mini", tokens.O200kBase},
		{"", "gpt-4-0613", tokens.Cl100kBase},
		{"", "gpt-3.5-turbo", tokens.Cl100kBase},
		{tokens.Cl100kBase, "gpt-4o", tokens.Cl100kBase}, // explicit wins
		{"", "llama-3.1-70b-instruct", tokens.Fallback},
		{"", "", tokens.Fallback},
	} {
		got, err := tokens.EncodingForModel(tc.enc, tc.model)
		if err != nil || got != tc.want {
			t.Errorf("EncodingForModel(%q, %q) = %q, %v; want %q", tc.enc, tc.model, got, err, tc.want)
		}
	}
	if _, err := tokens.EncodingForModel("o200k", "gpt-4o"); err == nil || !strings.Contains(err.Error(), `unknown tokenizer encoding "o200k"`) {
		t.Errorf("bad explicit encoding: %v", err)
	}
	if _, ok := tokens.ModelEncoding("mistral-large"); ok {
		t.Error("mistral-large reported as known")
	}
}

func TestFits(t *testing.T) {
	msgs := rendered(t, "triage", triageInput)
	n, err := tokens.CountMessages(tokens.O200kBase, msgs)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		max, window int
		ok          bool
	}{
		{300, n + 300, true},
		{300, n + 299, false},
		{0, n, true},
		{1 << 20, 0, true}, // unknown window
	} {
		need, ok, err := tokens.Fits(tokens.O200kBase, msgs, tc.max, tc.window)
		if err != nil || need != n+tc.max || ok != tc.ok {
			t.Errorf("Fits(max %d, window %d) = %d, %v, %v; want %d, %v", tc.max, tc.window, need, ok, err, n+tc.max, tc.ok)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for _, text := range []string{"", "plain ascii", "Größe 10 € — 日本語 🙂\n\ttabs", triageInput} {
		for _, enc := range []string{tokens.Cl100kBase, tokens.O200kBase} {
			if err := tokens.RoundTrip(enc, text); err != nil {
				t.Errorf("%s %q: %v", enc, text, err)
			}
		}
	}
	if err := tokens.RoundTrip(tokens.Cl100kBase, "ok \xff bytes"); err == nil || !strings.Contains(err.Error(), "differs from byte 3") {
		t.Errorf("invalid UTF-8 must not round-trip: %v", err)
	}
}

func TestCountCacheIsPerEncodingAndText(t *testing.T) {
	long := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20)
	for range 2 { // the second round is served from the cache
		a, _ := tokens.CountText(tokens.Cl100kBase, long)
		b, _ := tokens.CountText(tokens.Cl100kBase, long+"!!! extra words here")
		c, _ := tokens.CountText(tokens.R50kBase, long+" 日本語の文章")
		d, _ := tokens.CountText(tokens.O200kBase, long+" 日本語の文章")
		if a != 201 || b <= a || c == d {
			t.Fatalf("counts %d %d %d %d", a, b, c, d)
		}
	}
}

func TestContainsSpecialTokens(t *testing.T) {
	got := tokens.ContainsSpecialTokens("a <|fim_prefix|> b <|endoftext|> c <|endoftext|>")
	if strings.Join(got, ",") != "<|endoftext|>,<|fim_prefix|>" {
		t.Errorf("got %v", got)
	}
	if got := tokens.ContainsSpecialTokens("<|not special|> text"); got != nil {
		t.Errorf("got %v", got)
	}
}

func TestConcurrentFirstUse(t *testing.T) {
	// r50k_base is used by no other test, so the goroutines race to build it.
	var wg sync.WaitGroup
	counts := make([]int, 8)
	for i := range counts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := tokens.CountText(tokens.R50kBase, "the same sentence, counted concurrently")
			if err != nil {
				t.Error(err)
			}
			counts[i] = n
		}()
	}
	wg.Wait()
	for _, n := range counts {
		if n == 0 || n != counts[0] {
			t.Fatalf("counts differ or are zero: %v", counts)
		}
	}
}

func BenchmarkCount_Triage(b *testing.B) {
	msgs := rendered(b, "triage", triageInput)
	benchCount(b, msgs)
}

func BenchmarkCount_Invoice(b *testing.B) {
	msgs := rendered(b, "invoice", invoiceInput)
	benchCount(b, msgs)
}

// benchCount measures one job's count. "per_job" is the production case: the
// system message is the same for every job of an owner (its count is cached
// for that owner) and the user message is new each time. "uncached" makes
// every message new.
func benchCount(b *testing.B, msgs []providers.Message) {
	if _, err := tokens.CountMessages(tokens.O200kBase, msgs); err != nil { // build the encoder outside the timer
		b.Fatal(err)
	}
	run := func(b *testing.B, vary func(i int, m providers.Message) bool) {
		tag := b.Name() // distinct per sub-benchmark, so one's texts are never another's cache hits
		b.ReportAllocs()
		job := make([]providers.Message, len(msgs))
		i := 0
		for b.Loop() {
			i++
			for j, m := range msgs {
				if vary(j, m) {
					m.Content += fmt.Sprintf(" %s#%d", tag, i)
				}
				job[j] = m
			}
			if _, err := tokens.CountMessagesFor("bench-owner", tokens.O200kBase, job); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("per_job", func(b *testing.B) { run(b, func(_ int, m providers.Message) bool { return m.Role == "user" }) })
	b.Run("uncached", func(b *testing.B) { run(b, func(int, providers.Message) bool { return true }) })
}
