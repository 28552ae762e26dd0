// Package tokens counts tokens the way OpenAI-family tokenizers do, with
// github.com/pkoukk/tiktoken-go and the BPE tables embedded by
// github.com/pkoukk/tiktoken-go-loader: nothing is downloaded at run time.
//
// The router uses it before dispatch to skip a provider whose context window cannot
// hold the rendered prompt plus max_tokens (SPEC §8), and the conformance runner to
// check a prompt fits a provider's tokenizer.
//
// Encoders are built once per encoding and cached; every function is safe for
// concurrent use. The package installs the offline loader in tiktoken-go's global
// state on first use; nothing else in the router should call tiktoken directly.
//
// It must not call providers or touch the database.
package tokens

import (
	"fmt"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// Encodings available offline.
const (
	O200kBase  = "o200k_base"
	Cl100kBase = "cl100k_base"
	P50kBase   = "p50k_base"
	R50kBase   = "r50k_base"
)

// Fallback is the encoding used for a model tiktoken does not know when the
// provider names no tokenizer. cl100k_base spends more tokens than o200k_base on
// most text, so an unknown model is judged conservatively.
const Fallback = Cl100kBase

var supported = map[string]bool{O200kBase: true, Cl100kBase: true, P50kBase: true, R50kBase: true}

var loaderOnce sync.Once

type encoder struct {
	once sync.Once
	tk   *tiktoken.Tiktoken
	err  error
}

var encoders sync.Map // encoding name -> *encoder

// get returns the cached encoder for an encoding, building it on first use.
func get(encoding string) (*tiktoken.Tiktoken, error) {
	if !supported[encoding] {
		return nil, fmt.Errorf("unknown tokenizer encoding %q; use one of o200k_base, cl100k_base, p50k_base, r50k_base", encoding)
	}
	loaderOnce.Do(func() { tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader()) })
	e, _ := encoders.LoadOrStore(encoding, &encoder{})
	enc := e.(*encoder)
	enc.once.Do(func() {
		enc.tk, enc.err = tiktoken.GetEncoding(encoding)
		if enc.err != nil {
			enc.err = fmt.Errorf("load tokenizer %s: %w", encoding, enc.err)
		}
	})
	return enc.tk, enc.err
}
