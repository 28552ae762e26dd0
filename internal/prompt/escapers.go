package prompt

// print, println, html, js and urlquery are text/template's built-ins of
// those names (fmt.Sprint, fmt.Sprintln and its escapers) wrapped by
// refusingNull, refusing a null as printf does: the built-ins print an absent
// optional key or a null as "<no value>" or "<nil>" before escaping it, so
// "&lt;no value&gt;", "\u003Cno value\u003E" or "%3Cno+value%3E" reached the
// model where render's check for "<no value>" could not see it. A null is
// errNullPrinted, an array or object holding one errNestedNullPrinted.

// refusingNull is the template function name, f, refusing a null argument
// (printedNull) before f prints it.
func refusingNull(name string, f func(...any) string) func(...any) (string, error) {
	return func(args ...any) (string, error) {
		if err := printedNull(name, args); err != nil {
			return "", err
		}
		return f(args...), nil
	}
}
