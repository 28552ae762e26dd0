// Package conformance owns the conformance suites and what they decide (SPEC §9):
// loading the suites in conformance/suites/<prompt>/suite.yaml, running every
// case of every suite against providers (Run), storing the result of each
// provider × prompt version in PostgreSQL, and the Gate that keeps a provider
// without a fresh passing result for exactly the job's prompt version out of
// automatic failover and hedging.
//
// A case passes when, for the provider under test:
//
//  1. the input passes the prompt's input schema and every message renders
//     completely (no missing template value);
//  2. every rendered message encodes and decodes losslessly with the provider's
//     tokenizer and contains no special-token text (such as <|endoftext|>);
//  3. the rendered prompt plus max_tokens fits the provider's context window;
//  4. the provider answers a full round trip, at the suite's temperature (0 by
//     default), through the real adapter;
//  5. the answer passes the prompt's output schema and business contract;
//  6. the answer meets the case's expectations (exact values, allowed values,
//     array lengths, patterns).
//
// A provider × prompt passes when every case passes. The Gate reads only the
// database: the latest run of exactly (provider, prompt, version) with the model
// the attempt asks for must have passed, against the prompt's current content
// (Prompt.Digest; runs without a digest count for any) and the target's
// current settings (TargetDigest: its provider's type, base URL and request
// settings; runs without a digest count for any), and be younger than
// conformance.max_age on the database clock.
package conformance
