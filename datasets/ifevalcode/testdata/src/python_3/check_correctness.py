def check_correctness():
    assert word_frequencies("Hi, hi there") == {"hi": 2, "there": 1}
    assert word_frequencies("") == {}
    assert word_frequencies("a-b a") == {"a": 2, "b": 1}
    assert word_frequencies("123 go GO go!") == {"go": 3}
    assert word_frequencies("The the THE end") == {"the": 3, "end": 1}
