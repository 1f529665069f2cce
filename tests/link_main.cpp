// The program of the link tests (CMakeLists.txt): it calls nothing. Each test links one
// layer's archive whole beside the layers that layer may use, so the linker resolves every
// symbol the layer's files need from those alone.
int main() { return 0; }
