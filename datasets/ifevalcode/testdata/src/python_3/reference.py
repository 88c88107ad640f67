import re
from collections import Counter


def word_frequencies(text):
    # 把文本转成小写，并找出所有由字母组成的单词
    words = re.findall(r"[a-z]+", text.lower())
    # 统计每个单词出现的次数
    return dict(Counter(words))
