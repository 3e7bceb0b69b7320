import FuzzSupport

/// The entry point of a plain build (no libFuzzer): replays inputs, or writes the seed corpus.
/// See `FuzzReplay` for why it is named after the module.
@_cdecl("fuzz_binary_decoder_main")
func fuzzBinaryDecoderMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
  FuzzReplay.run(
    arguments: FuzzReplay.arguments(argc, argv), test: BinaryDecoderTarget.test, seeds: BinaryDecoderTarget.seeds)
}
