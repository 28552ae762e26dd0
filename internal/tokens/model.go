package tokens

import (
	"strings"

	"github.com/pkoukk/tiktoken-go"
)

// extraModels adds models newer than tiktoken-go's table (its prefix table covers
// gpt-4o-, gpt-4.1-, gpt-4-, gpt-3.5-turbo-).
var extraModels = map[string]string{
	"o1": O200kBase, "o3": O200kBase, "o4-mini": O200kBase, "gpt-5": O200kBase,
	"chatgpt-4o-latest": O200kBase, "gpt-4o-mini": O200kBase,
}

var extraPrefixes = map[string]string{
	"o1-": O200kBase, "o3-": O200kBase, "o4-": O200kBase, "gpt-5-": O200kBase,
	"gpt-5.": O200kBase, "gpt-4.5-": O200kBase, "gpt-oss-": O200kBase,
}

// EncodingForModel picks the encoding to count with. An explicit encoding (the
// provider's `tokenizer`) wins and must be one this package has offline. Otherwise
// the model name decides, by exact name then longest known prefix; a model name
// may carry a provider prefix ("openai/gpt-4o"). A model nobody knows gets Fallback
// (cl100k_base) and no error: counts are then an estimate, as for any
// non-OpenAI model — use ModelEncoding to tell the cases apart.
func EncodingForModel(encoding, model string) (string, error) {
	if encoding != "" {
		if _, err := get(encoding); err != nil {
			return "", err
		}
		return encoding, nil
	}
	if enc, ok := ModelEncoding(model); ok {
		return enc, nil
	}
	return Fallback, nil
}

// ModelEncoding returns the encoding tiktoken defines for a model and whether the
// model is known at all. A fine-tuned model's name (ft:gpt-4o-mini-2024-07-18:acme::9abc)
// is looked up by its base model's (gpt-4o-mini-2024-07-18), and a tagged one
// (gpt-oss:20b, as Ollama names it) as gpt-oss-20b, then as gpt-oss.
func ModelEncoding(model string) (string, bool) {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	// An OpenAI fine-tuned model, ft:<base>:<org>:<suffix>:<id>, counts as
	// its base model.
	if base, ok := strings.CutPrefix(m, "ft:"); ok {
		m, _, _ = strings.Cut(base, ":")
	}
	if m == "" {
		return "", false
	}
	if enc, ok := lookupModel(m); ok {
		return enc, true
	}
	// Ollama and LM Studio name a model with a tag after a colon
	// (gpt-oss:20b, gpt-4o:latest): the tag is the size or variant that
	// OpenAI's names give after a dash, or nothing the encoding depends on.
	if name, tag, ok := strings.Cut(m, ":"); ok && name != "" {
		if enc, ok := lookupModel(name + "-" + tag); ok {
			return enc, true
		}
		return lookupModel(name)
	}
	return "", false
}

// lookupModel finds a lowercased model name in the tables, by exact name then
// longest known prefix.
func lookupModel(m string) (string, bool) {
	if enc, ok := tiktoken.MODEL_TO_ENCODING[m]; ok && supported[enc] {
		return enc, true
	}
	if enc, ok := extraModels[m]; ok {
		return enc, true
	}
	best, bestEnc := "", ""
	for _, table := range []map[string]string{tiktoken.MODEL_PREFIX_TO_ENCODING, extraPrefixes} {
		for prefix, enc := range table {
			if strings.HasPrefix(m, prefix) && len(prefix) > len(best) && supported[enc] {
				best, bestEnc = prefix, enc
			}
		}
	}
	return bestEnc, best != ""
}
