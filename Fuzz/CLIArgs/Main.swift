import FuzzSupport

/// The entry point of a plain build (no libFuzzer): replays inputs, or writes the seed corpus.
/// See `FuzzReplay` for why it is named after the module.
@_cdecl("fuzz_cli_args_main")
func fuzzCLIArgsMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
  FuzzReplay.run(arguments: FuzzReplay.arguments(argc, argv), test: CLIArgsTarget.test, seeds: CLIArgsTarget.seeds)
}
