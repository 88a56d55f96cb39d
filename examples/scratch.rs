use shape_runtime::{Tiktoken, Tokenizer};
fn main() {
    let t = Tiktoken::o200k_base();
    for s in [
        "tkt_9f3a71c4 \"Card declined at checkout\": open, high priority, Priya Raman, Northwind Foods, opened 2026-02-11",
        "tkt_9f3a71c4 \"Card declined at checkout\": open, high priority, Priya Raman, Northwind Foods, opened 2026-02-11, updated 2026-02-14",
        "tkt_9f3a71c4 \"<untrusted source=\"search_tickets.subject\">Card declined at checkout</untrusted>\": open, high priority, Priya Raman, Northwind Foods, opened 2026-02-11",
        "tkt_9f3a71c4 <untrusted:subject>Card declined at checkout</untrusted>: open, high priority, Priya Raman, Northwind Foods, opened 2026-02-11",
        "tkt_9f3a71c4 ⟦subject: Card declined at checkout⟧: open, high priority, Priya Raman, Northwind Foods, opened 2026-02-11",
        "tkt_9f3a71c4 «Card declined at checkout»: open, high priority, Priya Raman, Northwind Foods, opened 2026-02-11",
        "<untrusted source=\"search_tickets.subject\">",
        "</untrusted>",
        "⟦",
        "⟧",
        "«",
        "»",
        "‹",
        "›",
        "{\"id\":\"tkt_9f3a71c4\",\"subject\":\"Card declined at checkout\",\"status\":\"open\",\"priority\":\"high\",\"assignee\":null,\"org\":\"Northwind Foods\",\"opened\":\"2026-02-11\",\"last_update\":\"2026-02-14\"}",
        "tkt_9f3a71c4 | Card declined at checkout | open | high | Priya Raman | Northwind Foods | 2026-02-11 | 2026-02-14\n",
        "tkt_9f3a71c4|Card declined at checkout|open|high|Priya Raman|Northwind Foods|2026-02-11|2026-02-14\n",
        "tkt_9f3a71c4,Card declined at checkout,open,high,Priya Raman,Northwind Foods,2026-02-11,2026-02-14\n",
        "tkt_9f3a71c4\tCard declined at checkout\topen\thigh\tPriya Raman\tNorthwind Foods\t2026-02-11\t2026-02-14\n",
        "  tkt_9f3a71c4,Card declined at checkout,open,high,Priya Raman,Northwind Foods,2026-02-11,2026-02-14\n",
        "Priya Raman",
        "Dana Cole",
        "Ana Ruiz",
        "null",
    ] {
        println!("{:4} {}", t.count(s), s.escape_debug());
    }
}
