//! `inspect FILE [--json]`: the header summary (or the whole header as JSON) of a GGUF file or a
//! safetensors checkpoint.

use std::io::{BufWriter, Write};

use gguf_lens::model::{open, Model, Opened};

use crate::{escape, json, json_line, text, write_stdout, Failure};

/// What a model file holds: metadata, tensors, quant mix, bits per weight (header only).
///
/// Exit 0, 1 on a bad file (one `error:` line naming what and where), 2 on bad usage.
///
///   gguf-lens inspect model.gguf
///   gguf-lens inspect model.gguf --json | jq '.tensors | length'
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// A .gguf (a split model by any shard: NAME-00001-of-00003.gguf opens every shard), a
    /// .safetensors or a model.safetensors.index.json (shards beside it)
    pub file: String,
    /// The whole header as one JSON document
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &Args) -> Result<(), Failure> {
    let Opened { model, files } = open(&args.file)?;
    let model = match model {
        Model::Gguf(model) => model,
        Model::Safetensors(c) => {
            let text = if args.json {
                json_line(&json::checkpoint_json(&c, &files))
            } else {
                text::checkpoint_text(&c, &files)
            };
            return write_stdout(text.as_bytes());
        }
    };
    let sizes = &files.sizes;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let written = if args.json {
        let mut warnings = Vec::new();
        let written = json::write_inspect_json(&mut out, &model, sizes, &mut warnings);
        for warning in warnings {
            eprintln!("warning: {}", escape::shown(&warning));
        }
        written
    } else {
        out.write_all(escape::lines(&text::inspect_text(&model, sizes)).as_bytes())
    };
    written
        .and_then(|()| out.flush())
        .map_err(crate::stdout_failed)
}
