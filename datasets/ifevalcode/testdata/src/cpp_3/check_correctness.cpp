#include <cassert>
#include <string>

void check_correctness() {
    assert(count_vowels("Hello World") == 3);
    assert(count_vowels("") == 0);
    assert(count_vowels("AEIOU aeiou") == 10);
    assert(count_vowels("rhythm") == 0);
    assert(count_vowels("Programming in C++") == 4);
}
