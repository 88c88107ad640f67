def is_palindrome(s: str) -> bool:
    """Return True if s is a palindrome over its letters and digits, ignoring case."""
    return [c.lower() for c in s if c.isalnum()] == [c.lower() for c in reversed(s) if c.isalnum()]
