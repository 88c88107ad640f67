// Package toolcall parses model output into function calls and renders
// ground-truth calls back into model-style text.
//
// # Value model
//
// Argument values use a small, Python-faithful value model so that a checker
// can apply Python's type rules exactly (BFCL's reference checker is Python):
//
//	nil        Python None / JSON null
//	bool       Python bool
//	int64      Python int (a JSON number literal without '.', 'e' or 'E')
//	float64    Python float (a JSON number literal with '.', 'e' or 'E')
//	string     Python str
//	[]any      Python list / JSON array
//	Tuple      Python tuple (only produced by the Python-call syntax parser)
//	*Object    Python dict / JSON object, keeping key insertion order
//
// Key order is kept because the reference checker walks the model's
// arguments in order and reports the first failure, so the order decides
// which error type is reported.
package toolcall

// Tuple is a Python tuple value. Python never considers a tuple equal to a
// list, so it is kept distinct from []any.
type Tuple []any

// Object is a dict that keeps the insertion order of its keys, like a Python
// dict. The zero value is an empty object ready to use.
type Object struct {
	keys []string
	vals []any
}

// NewObject returns an empty object with room for n keys.
func NewObject(n int) *Object {
	return &Object{keys: make([]string, 0, n), vals: make([]any, 0, n)}
}

// Len returns the number of keys.
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.keys)
}

// Keys returns the keys in insertion order. The caller must not modify it.
func (o *Object) Keys() []string {
	if o == nil {
		return nil
	}
	return o.keys
}

// At returns the i-th key and value in insertion order.
func (o *Object) At(i int) (string, any) { return o.keys[i], o.vals[i] }

// Get returns the value stored under key and whether it is present.
func (o *Object) Get(key string) (any, bool) {
	if o == nil {
		return nil, false
	}
	for i, k := range o.keys {
		if k == key {
			return o.vals[i], true
		}
	}
	return nil, false
}

// Has reports whether key is present.
func (o *Object) Has(key string) bool {
	_, ok := o.Get(key)
	return ok
}

// Set stores value under key. Like a Python dict, an existing key keeps its
// position and gets the new value; a new key is appended.
func (o *Object) Set(key string, value any) {
	for i, k := range o.keys {
		if k == key {
			o.vals[i] = value
			return
		}
	}
	o.keys = append(o.keys, key)
	o.vals = append(o.vals, value)
}

// Map returns the object as a plain map (recursively converting nested
// objects and tuples), losing key order. It is meant for callers that do not
// care about order, such as JSON encoding or tests.
func (o *Object) Map() map[string]any {
	if o == nil {
		return nil
	}
	m := make(map[string]any, len(o.keys))
	for i, k := range o.keys {
		m[k] = Plain(o.vals[i])
	}
	return m
}

// Plain converts a value of the model above into plain Go values: *Object
// becomes map[string]any and Tuple becomes []any, recursively.
func Plain(v any) any {
	switch x := v.(type) {
	case *Object:
		return x.Map()
	case Tuple:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Plain(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Plain(e)
		}
		return out
	default:
		return v
	}
}

// Call is one function call decoded from model output: the function name
// and its keyword arguments, in the order the model wrote them.
type Call struct {
	Name string
	Args *Object
}
