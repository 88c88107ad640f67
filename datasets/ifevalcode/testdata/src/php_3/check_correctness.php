function check_correctness() {
    $close = function (float $a, float $b): bool { return abs($a - $b) < 1e-9; };
    if (!$close(Temperature::celsiusToFahrenheit(100.0), 212.0)) { throw new Exception("100 C must be 212 F"); }
    if (!$close(Temperature::celsiusToFahrenheit(-40.0), -40.0)) { throw new Exception("-40 C must be -40 F"); }
    if (!$close(Temperature::fahrenheitToCelsius(32.0), 0.0)) { throw new Exception("32 F must be 0 C"); }
    if (!$close(Temperature::fahrenheitToCelsius(98.6), 37.0)) { throw new Exception("98.6 F must be 37 C"); }
}
