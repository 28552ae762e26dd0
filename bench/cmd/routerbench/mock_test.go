package main

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// splitContent cuts a string into n non-empty parts that join to it, between
// characters, at most one per character.
func TestSplitContent(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want []string
	}{
		{"abc", 0, []string{"abc"}},
		{"abc", 1, []string{"abc"}},
		{"abcd", 2, []string{"ab", "cd"}},
		{"abcde", 3, []string{"a", "bc", "de"}},
		{"héé", 3, []string{"h", "é", "é"}},
		{"ab", 10, []string{"a", "b"}},
	} {
		if got := splitContent(tc.s, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("splitContent(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

// The mock streams an answer in Behaviour.Chunks content chunks, which a
// go-openai client reassembles into the whole answer.
func TestMockStreamsInChunks(t *testing.T) {
	m, err := StartMock(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.SetBehaviour(map[string]Behaviour{"primary": {Chunks: 20}})
	cfg := openai.DefaultConfig("test")
	cfg.BaseURL = m.URL()
	stream, err := openai.NewClientWithConfig(cfg).CreateChatCompletionStream(t.Context(), openai.ChatCompletionRequest{
		Model: "primary", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var content strings.Builder
	chunks := 0
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Choices) > 0 && resp.Choices[0].Delta.Content != "" {
			chunks++
			content.WriteString(resp.Choices[0].Delta.Content)
		}
	}
	if chunks != 20 || content.String() != validTriage {
		t.Fatalf("%d content chunks of %q, want 20 of %q", chunks, content.String(), validTriage)
	}
}
