#include <algorithm>
#include <cctype>
#include <iostream>
#include <string>

int count_vowels(const std::string& s) {
    return static_cast<int>(std::count_if(s.begin(), s.end(), [](char ch) {
        char c = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
    }));
}

int main() {
    std::cout << count_vowels("Hello World") << std::endl;
    return 0;
}
