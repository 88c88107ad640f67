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
	fields []field
}

type field struct {
	key string
	val any
}

// NewObject returns an empty object with room for n keys.
func NewObject(n int) *Object {
	return &Object{fields: make([]field, 0, n)}
}

// Len returns the number of keys.
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.fields)
}

// Keys returns a new slice of the keys in insertion order.
func (o *Object) Keys() []string {
	if o == nil {
		return nil
	}
	keys := make([]string, len(o.fields))
	for i, f := range o.fields {
		keys[i] = f.key
	}
	return keys
}

// At returns the i-th key and value in insertion order.
func (o *Object) At(i int) (string, any) { return o.fields[i].key, o.fields[i].val }

// Get returns the value stored under key and whether it is present.
func (o *Object) Get(key string) (any, bool) {
	if o == nil {
		return nil, false
	}
	for i := range o.fields {
		// Checking the first byte before comparing avoids most calls into
		// the byte comparison for equal-length keys.
		k := o.fields[i].key
		if len(k) == len(key) && (len(k) == 0 || k[0] == key[0]) && k == key {
			return o.fields[i].val, true
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
	for i := range o.fields {
		if o.fields[i].key == key {
			o.fields[i].val = value
			return
		}
	}
	o.fields = append(o.fields, field{key, value})
}

// Map returns the object as a plain map (recursively converting nested
// objects and tuples), losing key order. It is meant for callers that do not
// care about order, such as JSON encoding or tests.
func (o *Object) Map() map[string]any {
	if o == nil {
		return nil
	}
	m := make(map[string]any, len(o.fields))
	for _, f := range o.fields {
		m[f.key] = Plain(f.val)
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
