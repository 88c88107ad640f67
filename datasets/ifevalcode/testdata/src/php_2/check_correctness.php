function check_correctness() {
    $cases = [
        ["Hello, World!", "hello-world"],
        ["  PHP is fun  ", "php-is-fun"],
        ["already-slugged", "already-slugged"],
        ["", ""],
        ["C++ & Go 2024", "c-go-2024"],
    ];
    foreach ($cases as [$in, $want]) {
        $got = slugify($in);
        if ($got !== $want) {
            throw new Exception("slugify(" . $in . ") = " . $got . ", want " . $want);
        }
    }
}
