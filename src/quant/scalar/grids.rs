//! STUB: IQ lookup tables, to be generated.
