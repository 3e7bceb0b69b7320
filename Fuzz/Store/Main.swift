import FuzzSupport

/// The entry point of a plain build (no libFuzzer): replays inputs, or writes the seed corpus.
/// See `FuzzReplay` for why it is named after the module.
@_cdecl("fuzz_store_main")
func fuzzStoreMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
  FuzzReplay.run(arguments: FuzzReplay.arguments(argc, argv), test: StoreFiles.test, seeds: StoreFiles.seeds)
}
