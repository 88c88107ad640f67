package judge

// UniqueKeys is the rule most replies' Validate begins with: every item of
// a list in the reply names a key (a rubric id, a dimension, a blank
// number), and no key comes twice. A key the reply leaves out, or one the
// request did not ask about, breaks no rule of the reply's form: the
// caller records it against that key.
type UniqueKeys[T any, K comparable] struct {
	// Key returns an item's key, and false when the item names none.
	Key func(item T) (K, bool)
	// NoKey is the error for the i-th item (from 1), which names no key.
	NoKey func(i int, item T) error
	// Twice is the error for an item whose key an earlier item named.
	Twice func(key K) error
	// Item, when set, checks the rest of an item whose key is good.
	Item func(key K, item T) error
}

// Check returns the first error of items, item by item in order: no key,
// then a key named before, then Item's error; nil when every item passes.
func (u UniqueKeys[T, K]) Check(items []T) error {
	seen := make(map[K]bool, len(items))
	for i, it := range items {
		k, ok := u.Key(it)
		switch {
		case !ok:
			return u.NoKey(i+1, it)
		case seen[k]:
			return u.Twice(k)
		}
		seen[k] = true
		if u.Item != nil {
			if err := u.Item(k, it); err != nil {
				return err
			}
		}
	}
	return nil
}
