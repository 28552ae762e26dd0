// Package migrations holds the router's numbered SQL migrations, embedded in the
// binary. File names are NNNN_name.sql; they are applied in order, each in its own
// transaction, by internal/store under an advisory lock. A migration, once
// released, is never edited: add a new file instead.
package migrations

import "embed"

// FS holds the *.sql files.
//
//go:embed *.sql
var FS embed.FS
