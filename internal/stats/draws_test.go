package stats

import (
	"math/rand/v2"
	"testing"
)

// TestDrawsUniform checks the bounded draws by a chi-square test: 600,000
// draws from [0, 6) (df = 5; the 0.999 quantile is 20.5), and that every
// value of a bound that is not a power of two is reached.
func TestDrawsUniform(t *testing.T) {
	d := &draws{src: rand.NewPCG(1, 2)}
	const n, k = 600000, 6
	var count [k]int
	for range n {
		count[d.intn(k)]++
	}
	var chi2 float64
	for _, c := range count {
		e := float64(n) / k
		chi2 += (float64(c) - e) * (float64(c) - e) / e
	}
	if chi2 > 20.5 {
		t.Fatalf("chi2 %v, counts %v", chi2, count)
	}
	seen := map[uint32]bool{}
	for range 10000 {
		v := d.intn(1000)
		if v >= 1000 {
			t.Fatalf("draw %d out of [0, 1000)", v)
		}
		seen[v] = true
	}
	if len(seen) != 1000 {
		t.Fatalf("%d of 1000 values reached", len(seen))
	}
	if d.intn(1) != 0 {
		t.Fatal("intn(1)")
	}
}

func BenchmarkDraws(b *testing.B) {
	b.Run("intn", func(b *testing.B) {
		d := &draws{src: rand.NewPCG(1, 2)}
		var s uint32
		for b.Loop() {
			s += d.intn(10000)
		}
		_ = s
	})
	b.Run("rand.IntN", func(b *testing.B) {
		r := rand.New(rand.NewPCG(1, 2))
		var s int
		for b.Loop() {
			s += r.IntN(10000)
		}
		_ = s
	})
}
