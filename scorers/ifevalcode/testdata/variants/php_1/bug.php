<?php
function sum_even(array $numbers): int
{
    return array_sum(array_filter($numbers, fn($n) => $n % 2 === 1));
}
