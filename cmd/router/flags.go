package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

// errUsage: the flags were wrong; usage was already printed.
var errUsage = errors.New("usage")

func newFlags(name, usage, summary string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: %s\n\n%s\n\nFlags:\n", usage, summary)
		fs.PrintDefaults()
	}
	return fs
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	return nil
}

func configFlag(fs *flag.FlagSet) *string {
	return fs.String("config", "router.yaml", "path of the YAML configuration file")
}
