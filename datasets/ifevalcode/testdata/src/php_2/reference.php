<?php
function slugify(string $text): string
{
    // 先转成小写，再把连续的非字母数字字符替换成连字符
    $slug = preg_replace('/[^a-z0-9]+/', '-', strtolower($text));
    // 去掉两端多余的连字符
    return trim($slug, '-');
}
