<?php
declare(strict_types=1);

class Temperature
{
    const OFFSET = 32;

    public static function celsiusToFahrenheit(float $c): float
    {
        return $c * 9 / 5 + self::OFFSET;
    }

    public static function fahrenheitToCelsius(float $f): float
    {
        return ($f - self::OFFSET) * 5 / 9;
    }
}
