// The program that builds the tests' precompiled gtest header (tests/CMakeLists.txt): only its
// compile flags matter, which must be the test programs' own for them to reuse the header.
int main() { return 0; }
