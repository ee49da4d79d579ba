//! Precise locations, in the consent tier: a street address with its house number (English,
//! French, Spanish, Italian, Portuguese, German and Dutch word orders) and GPS coordinates to
//! at least three decimal places (about 100 m), as a pair, as JSON `lat`/`lng` members or in
//! degrees, minutes and seconds. A city, a country or a street without a number is not precise.

use regex::Regex;

use crate::category::Category;
use crate::finding::Finding;
use crate::patterns::fixed;

/// The location patterns, compiled once per classifier.
#[derive(Debug)]
pub struct Locations {
    patterns: Vec<Regex>,
    decimal_pair: Regex,
}

/// A word of a street's name: capitalised (letters of any script, an apostrophe or a dot),
/// or an ordinal (`5th`).
const NAME: &str = r"(?:\p{Lu}[\p{L}'’.]*|\d{1,3}(?:st|nd|rd|th))";

impl Locations {
    /// The compiled patterns.
    pub fn new() -> Locations {
        let english = format!(
            r"(?-u:\b)\d{{1,5}}[A-Za-z]?,?[ \t]+(?:{NAME}[ \t]+){{1,4}}(?:Street|St|Road|Rd|Avenue|Ave|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Place|Pl|Way|Terrace|Close|Crescent|Parkway|Pkwy|Highway|Hwy|Square|Sq|Row|Gardens|Grove|Mews|Walk|Hill)(?-u:\b)\.?"
        );
        let french = format!(
            r"(?-u:\b)\d{{1,4}}(?:[ \t]?(?:bis|ter))?,?[ \t]+(?i:rue|avenue|boulevard|bd|place|allée|impasse|chemin|quai|cours)[ \t]+(?:(?:de|du|des|la|le|l'|d')[ \t]?)*{NAME}(?:[ \t]+{NAME})?"
        );
        let southern = format!(
            r"(?-u:\b)(?:Calle|C/|Avenida|Avda\.?|Plaza|Paseo|Carrer|Via|Viale|Piazza|Corso|Rua|Travessa|Largo)[ \t]+(?:(?:de|del|la|los|las|dei|della|di|do|da|dos)[ \t]+)*{NAME}(?:[ \t]+{NAME}){{0,2}},?[ \t]+\d{{1,4}}(?-u:\b)"
        );
        let germanic = r"(?-u:\b)\p{Lu}\p{Ll}+(?:straße|strasse|str\.|weg|gasse|platz|allee|ring|damm|ufer|laan|straat|gracht|plein|kade|singel)[ \t]+\d{1,4}[a-z]?(?-u:\b)";
        let json = r#"(?i)"?lat(?:itude)?"?[ \t]*[:=]?[ \t]*-?\d{1,2}\.\d{3,}[ \t]*,[ \t]*"?(?:lng|lon|long|longitude)"?[ \t]*[:=]?[ \t]*-?\d{1,3}\.\d{3,}"#;
        let dms = r#"\d{1,2}°[ \t]?\d{1,2}['′][ \t]?\d{1,2}(?:\.\d+)?(?:"|″|'')?[ \t]?[NS][, \t]+\d{1,3}°[ \t]?\d{1,2}['′][ \t]?\d{1,2}(?:\.\d+)?(?:"|″|'')?[ \t]?[EW]"#;
        Locations {
            patterns: [english.as_str(), french.as_str(), southern.as_str(), germanic, json, dms].map(fixed).into(),
            decimal_pair: fixed(r"(?-u:\b)-?\d{1,2}\.\d{3,}[ \t]*,[ \t]*-?\d{1,3}\.\d{3,}(?-u:\b)"),
        }
    }

    /// The precise locations of `text`.
    pub fn find(&self, text: &str, out: &mut Vec<Finding>) {
        for pattern in &self.patterns {
            out.extend(pattern.find_iter(text).map(|m| Finding::new(Category::Location, m.range())));
        }
        for m in self.decimal_pair.find_iter(text) {
            if coordinates(m.as_str()) {
                out.push(Finding::new(Category::Location, m.range()));
            }
        }
    }
}

impl Default for Locations {
    fn default() -> Self {
        Locations::new()
    }
}

/// Whether a `lat, lon` pair is in range, and not two fractions below one (scores, ratios).
fn coordinates(pair: &str) -> bool {
    let mut parts = pair.split(',').map(|p| p.trim().parse::<f64>());
    let (Some(Ok(lat)), Some(Ok(lon))) = (parts.next(), parts.next()) else { return false };
    lat.abs() <= 90.0 && lon.abs() <= 180.0 && (lat.abs() >= 1.0 || lon.abs() >= 1.0)
}
