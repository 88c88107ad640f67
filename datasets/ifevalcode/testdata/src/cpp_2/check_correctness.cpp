#include <cassert>
#include <vector>

void check_correctness() {
    assert((merge_sorted({1, 3, 5}, {2, 4, 6}) == std::vector<int>{1, 2, 3, 4, 5, 6}));
    assert((merge_sorted({}, {1, 2}) == std::vector<int>{1, 2}));
    assert(merge_sorted({}, {}).empty());
    assert((merge_sorted({1, 1, 2}, {1, 3}) == std::vector<int>{1, 1, 1, 2, 3}));
    assert((merge_sorted({-5, 0}, {-7, 10}) == std::vector<int>{-7, -5, 0, 10}));
}
