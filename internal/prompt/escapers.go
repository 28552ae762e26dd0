package prompt

import "text/template"

// html, js and urlquery are text/template's built-ins of those names,
// refusing a null as print does: the built-ins print an absent optional key
// or a null as "<no value>" or "<nil>" before escaping it, so
// "&lt;no value&gt;", "\u003Cno value\u003E" or "%3Cno+value%3E" reached the
// model where render's check for "<no value>" could not see it. A null is
// errNullPrinted, an array or object holding one errNestedNullPrinted.

func html(args ...any) (string, error) {
	if err := printedNull("html", args); err != nil {
		return "", err
	}
	return template.HTMLEscaper(args...), nil
}

func js(args ...any) (string, error) {
	if err := printedNull("js", args); err != nil {
		return "", err
	}
	return template.JSEscaper(args...), nil
}

func urlquery(args ...any) (string, error) {
	if err := printedNull("urlquery", args); err != nil {
		return "", err
	}
	return template.URLQueryEscaper(args...), nil
}
