package prompt

import (
	"fmt"
	"reflect"
	"sync"
	"text/template"
	"text/template/parse"
)

// MaxRenderSteps bounds the work of one render, all its messages together,
// as MaxRenderedBytes bounds what it writes. A template that relates each
// element of an input array to every other one (the tasks that block each
// task) does len² steps however little it prints, and the caller chooses
// len: a 50 KB input cost 9 s of CPU on the POST /v1/jobs request path, a
// 1 MiB body about an hour. A step is one iteration of a range, one call of a
// {{ define }}d template, one call of a template function, and one more per
// 256 bytes of text a function reads or returns (accumulating into a
// variable in a range, $acc = printf "%s, %s" $acc .x, copies len² bytes and
// prints nothing; {{ len $.doc }} in a range reads the document each time).
// Starting a range over an object counts its keys, which it sorts before the
// first iteration however few run (rangeStartSteps: a step per key, up to
// two for the largest objects).
// A million is far above what a template that visits each value once
// needs: the shipped prompts take 1 step (triage) and 781 (invoice, at the
// 100,000 characters its input schema allows); one calling two functions
// for each element of a 1 MiB body's longest array (45,000 small objects)
// takes 135,000. And it costs about 2 s of one core at worst (a nested
// range calling eq on each pair, the slowest step).
const MaxRenderSteps = 1_000_000

// stepBytes is the text a template function reads or returns for one step:
// copying or scanning it costs about what a call does.
const stepBytes = 256

// errTooMuchWork stops a render that passes MaxRenderSteps.
var errTooMuchWork = fmt.Errorf("the template does too much work for this input: the render passed %d steps "+
	"(a step is a loop iteration, a key of an object a loop goes over, a call of a template or a function, or 256 bytes of text a function reads or returns), "+
	"which a template that visits each input value a few times never needs; a loop inside a loop over the same array does len² of them: "+
	"send a smaller input (fewer elements); the prompt's author can bound the arrays (maxItems in the input schema) or avoid the nested loop",
	MaxRenderSteps)

// stepFunc is the function a range body and a defined template call first
// (countSteps): it counts one step. Templates cannot call it by name: the
// manifests are parsed without it.
const stepFunc = "routerRenderStep"

// work is what one render executes: the prompt's message templates, bound
// to template functions that count steps into this work alone. A Prompt
// keeps them in a sync.Pool (takeWork), so a render clones no template: a
// clone is made once per work and reused by the renders that follow.
type work struct {
	templates []*template.Template // per message; nil for a static one
	steps     int
}

// step counts n steps, and fails once the render passes MaxRenderSteps.
func (w *work) step(n int) error {
	w.steps += n
	if w.steps > MaxRenderSteps {
		return errTooMuchWork
	}
	return nil
}

// call counts a call of a template function that reads n bytes of text.
func (w *work) call(n int) error { return w.step(1 + n/stepBytes) }

// text counts the text a function returned, unless it failed.
func (w *work) text(s string, err error) error {
	if err != nil {
		return err
	}
	return w.step(len(s) / stepBytes)
}

// workPool makes and keeps the works of one prompt.
type workPool struct {
	base []*template.Template // per message, with countSteps applied; nil for a static one
	pool sync.Pool
}

// newWorkPool prepares the templates of a loaded prompt for counted
// renders: a copy of each message's template, its trees copied and given
// their step calls (countSteps), from which each work clones its own. The
// templates given stay as they were (load's checks and render's error
// explanations walk them).
func newWorkPool(templates []*template.Template, static []string) *workPool {
	wp := &workPool{base: make([]*template.Template, len(templates))}
	for i, t := range templates {
		if static[i] != "" {
			continue // render copies its text
		}
		c := template.Must(t.Clone())
		for _, d := range c.Templates() {
			if d.Tree != nil {
				d.Tree = d.Tree.Copy()
			}
		}
		countSteps(c)
		wp.base[i] = c
	}
	wp.pool.New = func() any {
		w := &work{templates: make([]*template.Template, len(wp.base))}
		fm := w.funcs()
		for i, t := range wp.base {
			if t != nil {
				w.templates[i] = template.Must(t.Clone()).Funcs(fm)
			}
		}
		return w
	}
	return wp
}

// takeWork returns a work for one render, with no steps counted; give it
// back with putWork.
func (p *Prompt) takeWork() *work {
	if p.works == nil { // a Prompt not made by LoadDir
		return &work{templates: p.templates}
	}
	w := p.works.pool.Get().(*work)
	w.steps = 0
	return w
}

func (p *Prompt) putWork(w *work) {
	if p.works != nil {
		p.works.pool.Put(w)
	}
}

// countSteps makes every template t defines call stepFunc first, and every
// range body at the start of each iteration: together with the counted
// functions, no loop and no recursion goes uncounted, even one that calls
// no function ({{ range .a }}{{ range $.a }}{{ end }}{{ end }}). Before each
// range it puts a call of rangeStartFunc (rangeStartNode), which counts the
// keys a range over an object sorts before its first iteration. t's trees
// must be its own (copied).
func countSteps(t *template.Template) {
	for _, d := range t.Templates() {
		if d.Tree == nil || d.Tree.Root == nil {
			continue
		}
		var ranges []*parse.RangeNode
		var lists []*parse.ListNode
		inspect(d.Tree.Root, true, func(n parse.Node, _ bool) bool {
			switch n := n.(type) {
			case *parse.RangeNode:
				ranges = append(ranges, n)
			case *parse.ListNode:
				lists = append(lists, n)
			}
			return true
		})
		for _, r := range ranges {
			if r.List != nil && !callsFirst(r.List) {
				r.List.Nodes = append([]parse.Node{stepNode(r.Pos, r.Line)}, r.List.Nodes...)
			}
		}
		for _, l := range lists { // a range is always in a list
			countRangeStarts(l)
		}
		if d.Name() != t.Name() { // the message itself runs once a render
			d.Tree.Root.Nodes = append([]parse.Node{stepNode(d.Tree.Root.Pos, 0)}, d.Tree.Root.Nodes...)
		}
	}
}

// callsFirst reports whether l, a range body, begins (after its text) with
// an action calling a template function ({{ upper .name }}), which counts
// each iteration already: a step call there would double the count, and
// cost what the call costs (a range over 50 items took 13% longer).
func callsFirst(l *parse.ListNode) bool {
	for _, n := range l.Nodes {
		switch n := n.(type) {
		case *parse.TextNode:
			continue
		case *parse.ActionNode:
			if len(n.Pipe.Cmds) == 0 || len(n.Pipe.Cmds[0].Args) == 0 {
				return false
			}
			id, ok := n.Pipe.Cmds[0].Args[0].(*parse.IdentifierNode)
			if !ok {
				return false
			}
			_, counted := funcs[id.Ident]
			return counted
		}
		return false
	}
	return false
}

// stepNode is {{ if routerRenderStep }}{{ end }}: a call that prints
// nothing and declares no variable.
func stepNode(pos parse.Pos, line int) parse.Node {
	return emptyIf(pos, line, []*parse.CommandNode{funcCommand(stepFunc, pos)})
}

// emptyIf is {{ if PIPELINE }}{{ end }}, the pipeline made of cmds.
func emptyIf(pos parse.Pos, line int, cmds []*parse.CommandNode) parse.Node {
	return &parse.IfNode{BranchNode: parse.BranchNode{NodeType: parse.NodeIf, Pos: pos, Line: line,
		Pipe: &parse.PipeNode{NodeType: parse.NodePipe, Pos: pos, Line: line, Cmds: cmds},
		List: &parse.ListNode{NodeType: parse.NodeList, Pos: pos}}}
}

// funcCommand is a command calling the template function name with no
// argument of its own (in a pipeline, it is given the value before it).
func funcCommand(name string, pos parse.Pos) *parse.CommandNode {
	return &parse.CommandNode{NodeType: parse.NodeCommand, Pos: pos,
		Args: []parse.Node{parse.NewIdentifier(name).SetPos(pos)}}
}

// funcs are the template functions (funcs) counting steps into w, stepFunc
// and rangeStartFunc.
func (w *work) funcs() template.FuncMap {
	fm := template.FuncMap{
		stepFunc:       func() (bool, error) { return false, w.step(1) },
		rangeStartFunc: func(v any) (any, error) { return v, w.step(rangeStartSteps(v)) },
	}
	for name, f := range funcs {
		fm[name] = w.counted(name, f)
	}
	return fm
}

// counted returns f, the template function name, counting a step per call,
// and a step per stepBytes of the text it reads from its string arguments
// and returns: {{ len $.doc }} or {{ eq .x $.doc }} in a range reads the
// whole text on each iteration. Each signature of funcs has its case, so
// that text/template passes the arguments as before (a reflect.Value as is).
func (w *work) counted(name string, f any) any {
	switch f := f.(type) {
	case func(any) (string, error): // json, upper, lower, trim
		return func(v any) (string, error) {
			if err := w.call(textOf(v)); err != nil {
				return "", err
			}
			s, err := f(v)
			return s, w.text(s, err)
		}
	case func(string, any) (string, error): // join
		return func(a string, v any) (string, error) {
			if err := w.call(len(a)); err != nil {
				return "", err
			}
			s, err := f(a, v)
			return s, w.text(s, err)
		}
	case func(string, ...any) (string, error): // printf
		return func(a string, args ...any) (string, error) {
			if err := w.call(len(a) + textOf(args...)); err != nil {
				return "", err
			}
			s, err := f(a, args...)
			return s, w.text(s, err)
		}
	case func(...any) (string, error): // print, println, html, js, urlquery
		return func(args ...any) (string, error) {
			if err := w.call(textOf(args...)); err != nil {
				return "", err
			}
			s, err := f(args...)
			return s, w.text(s, err)
		}
	case func(any, any) any: // default
		return func(a, b any) (any, error) {
			if err := w.call(0); err != nil {
				return nil, err
			}
			return f(a, b), nil
		}
	case func(any, ...any) (any, error): // slice
		return func(a any, args ...any) (any, error) {
			if err := w.call(textOf(a)); err != nil {
				return nil, err
			}
			return f(a, args...)
		}
	case func(reflect.Value) (int, error): // len
		return func(v reflect.Value) (int, error) {
			if err := w.call(valueText(v)); err != nil {
				return 0, err
			}
			return f(v)
		}
	case func(reflect.Value, ...reflect.Value) (bool, error): // eq
		return func(a reflect.Value, b ...reflect.Value) (bool, error) {
			n := valueText(a)
			for _, v := range b {
				n += valueText(v)
			}
			if err := w.call(n); err != nil {
				return false, err
			}
			return f(a, b...)
		}
	case func(reflect.Value, reflect.Value) (bool, error): // ne, lt, le, gt, ge
		return func(a, b reflect.Value) (bool, error) {
			if err := w.call(valueText(a) + valueText(b)); err != nil {
				return false, err
			}
			return f(a, b)
		}
	}
	panic(fmt.Sprintf("prompt: template function %q has a signature work.counted does not count: add a case for it", name))
}

// textOf is the bytes of the strings among args.
func textOf(args ...any) int {
	n := 0
	for _, a := range args {
		if s, ok := a.(string); ok {
			n += len(s)
		}
	}
	return n
}

// valueText is the bytes of v when it holds a string.
func valueText(v reflect.Value) int {
	if v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	if v.Kind() == reflect.String {
		return v.Len()
	}
	return 0
}
