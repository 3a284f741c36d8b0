/** The `tessera` command line. */
console.log("tessera: commands are being built");
