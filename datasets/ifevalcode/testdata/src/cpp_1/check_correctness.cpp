#include <cassert>

void check_correctness() {
    assert(fibonacci(0) == 0);
    assert(fibonacci(1) == 1);
    assert(fibonacci(2) == 1);
    assert(fibonacci(10) == 55);
    assert(fibonacci(50) == 12586269025LL);
    assert(fibonacci(90) == 2880067194370816120LL);
}
