import FuzzSupport

/// The entry point of a plain build (no libFuzzer): replays inputs, or writes the seed corpus.
/// See `FuzzReplay` for why it is named after the module.
@_cdecl("fuzz_hint_main")
func fuzzHintMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
  FuzzReplay.run(arguments: FuzzReplay.arguments(argc, argv), test: HintTarget.test, seeds: HintTarget.seeds)
}
