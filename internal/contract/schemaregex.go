package contract

import "github.com/santhosh-tekuri/jsonschema/v5"

// "format": "regex" is an annotation in every schema the router compiles (a
// caller's, a prompt's output_schema and input_schema): a string under it is
// not checked. jsonschema/v5 would check one by compiling it with
// regexp.Compile, and what compiling costs is not the string's length:
// "^\pL{900}$" is 11 bytes and holds about 7 MB compiled (14 to 26 ms), so an
// answer or input of a few KB of such strings cost seconds of CPU, and one of
// the 8 MiB an answer may be, hours. Parsing alone (regexp/syntax.Parse,
// nothing compiled) is no bound either: "(?i)[\x{80}-\x{10FFFF}]" is 22 bytes
// and takes about 5 ms to parse (case folding walks the range), 300 "\pL"
// about 6 ms. And the standard's "regex" is an ECMA-262 expression, which Go's
// regular expressions (RE2) would refuse when valid ("(?=x)", "\1"), so the
// check was not the standard's anyway; the standard makes a format an
// annotation unless asserted. The "pattern" keyword and "patternProperties"
// are unaffected: they are the schema's own expressions, bounded in a
// caller's schema before it compiles (MaxSchemaPatternSize).
func regexFormatIsAnnotation(c *jsonschema.Compiler) {
	// A format the compiler's own map holds wins over the package's
	// jsonschema.Formats; a nil checker checks nothing.
	c.Formats["regex"] = nil
}
