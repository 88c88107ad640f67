def check_correctness():
    assert is_palindrome("A man, a plan, a canal: Panama") is True
    assert is_palindrome("race a car") is False
    assert is_palindrome("") is True
    assert is_palindrome("No 'x' in Nixon") is True
    assert is_palindrome("0P") is False
    assert is_palindrome("ab_a") is True
