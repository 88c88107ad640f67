// Package pyrandom is Python's random.Random, as far as lm-evaluation-harness
// uses it to draw few-shot examples: the Mersenne Twister (MT19937) seeded
// from an int as CPython seeds it (init_by_array over the seed's 32-bit
// words), getrandbits, _randbelow and sample. The same seed gives the same
// numbers and the same samples as CPython 3.
package pyrandom

import (
	"fmt"
	"math"
	"math/bits"
)

const (
	n         = 624
	m         = 397
	matrixA   = 0x9908b0df
	upperMask = 0x80000000
	lowerMask = 0x7fffffff
)

// Rand is one random.Random state. It is not safe for concurrent use.
type Rand struct {
	mt  [n]uint32
	mti int
}

// New is random.Random(seed): the seed's absolute value, split into 32-bit
// words from the least significant, fed to init_by_array.
func New(seed int64) *Rand {
	u := uint64(seed)
	if seed < 0 {
		u = uint64(-seed) // math.MinInt64 wraps to its own absolute value
	}
	key := []uint32{uint32(u)}
	if hi := uint32(u >> 32); hi != 0 {
		key = append(key, hi)
	}
	r := &Rand{}
	r.initByArray(key)
	return r
}

func (r *Rand) initGenrand(s uint32) {
	r.mt[0] = s
	for i := 1; i < n; i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	r.mti = n
}

func (r *Rand) initByArray(key []uint32) {
	r.initGenrand(19650218)
	i, j := 1, 0
	k := max(n, len(key))
	for ; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= n {
			r.mt[0] = r.mt[n-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k = n - 1; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= n {
			r.mt[0] = r.mt[n-1]
			i = 1
		}
	}
	r.mt[0] = 0x80000000
}

// Uint32 is genrand_uint32: the next 32 random bits.
func (r *Rand) Uint32() uint32 {
	if r.mti >= n {
		for k := 0; k < n; k++ {
			y := (r.mt[k] & upperMask) | (r.mt[(k+1)%n] & lowerMask)
			v := r.mt[(k+m)%n] ^ (y >> 1)
			if y&1 != 0 {
				v ^= matrixA
			}
			r.mt[k] = v
		}
		r.mti = 0
	}
	y := r.mt[r.mti]
	r.mti++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// GetRandBits is getrandbits(k) for k from 0 to 32.
func (r *Rand) GetRandBits(k int) uint32 {
	if k <= 0 {
		return 0
	}
	return r.Uint32() >> (32 - k)
}

// below is _randbelow(n) (n from 1 to 2^32-1): getrandbits of n's bit
// length until one is below n.
func (r *Rand) below(n int) int {
	k := bits.Len(uint(n))
	v := int(r.GetRandBits(k))
	for v >= n {
		v = int(r.GetRandBits(k))
	}
	return v
}

// MaxPopulation bounds Sample's population: _randbelow here draws at most
// 32 bits, as CPython does for populations below 2^32.
const MaxPopulation = math.MaxUint32

// Sample is random.sample(range(pop), k): k distinct indexes below pop in
// the order CPython's draws them (a pool for small populations, a set of
// the chosen ones for large).
func (r *Rand) Sample(pop, k int) ([]int, error) {
	if k < 0 || k > pop {
		return nil, fmt.Errorf("pyrandom: sample %d of %d: sample larger than population or is negative", k, pop)
	}
	if pop > MaxPopulation {
		return nil, fmt.Errorf("pyrandom: sample of %d: population past %d", pop, MaxPopulation)
	}
	out := make([]int, k)
	setsize := 21
	if k > 5 {
		setsize += int(math.Pow(4, math.Ceil(math.Log(float64(k*3))/math.Log(4))))
	}
	if pop <= setsize {
		pool := make([]int, pop)
		for i := range pool {
			pool[i] = i
		}
		for i := 0; i < k; i++ {
			j := r.below(pop - i)
			out[i] = pool[j]
			pool[j] = pool[pop-i-1]
		}
		return out, nil
	}
	chosen := make(map[int]bool, k)
	for i := 0; i < k; i++ {
		j := r.below(pop)
		for chosen[j] {
			j = r.below(pop)
		}
		chosen[j] = true
		out[i] = j
	}
	return out, nil
}
