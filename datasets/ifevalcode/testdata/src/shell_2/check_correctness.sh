check_correctness() {
    [[ "$(reverse_string hello)" == "olleh" ]] || { echo "reverse_string hello must print olleh" >&2; exit 1; }
    [[ "$(reverse_string a)" == "a" ]] || { echo "reverse_string a must print a" >&2; exit 1; }
    [[ "$(reverse_string '')" == "" ]] || { echo "reverse_string '' must print an empty line" >&2; exit 1; }
    [[ "$(reverse_string 'ab c!')" == "!c ba" ]] || { echo "reverse_string 'ab c!' must print '!c ba'" >&2; exit 1; }
}
