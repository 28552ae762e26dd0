// Package prompt owns prompt manifests: loading prompts/<name>/prompt.yaml with its
// schema files, validating them at start, checking a job's input against the input
// schema, and rendering the messages from Go templates over the input.
//
// It must not call providers or touch the database.
package prompt
