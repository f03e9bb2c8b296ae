use super::*;
use crate::enums::Cluster;

fn event(conference: &[&str], location: Option<&str>, description: Option<&str>) -> CalendarEvent {
    CalendarEvent {
        uid: "evt-1".into(),
        title: Some("Weekly sync".into()),
        start_ms: 1_767_261_600_000,
        end_ms: 1_767_265_200_000,
        location: location.map(str::to_owned),
        description: description.map(str::to_owned),
        conference_uris: conference.iter().map(|s| (*s).to_owned()).collect(),
        cancelled: false,
    }
}

fn dial(kind: MeetingType, id: &str, passcode: Option<&str>, found_in: FoundIn) -> Detection {
    Detection::Dial(MeetingToDial {
        join: JoinRequest {
            meeting_id: Some(id.to_owned()),
            passcode: passcode.map(str::to_owned),
            cluster: Cluster::Prod,
            meeting_type: Some(kind),
        },
        found_in,
    })
}

fn not_dialable(words: &str) -> Detection {
    Detection::NotDialable(words.to_owned())
}

const TEAMS_PLAIN: &str = "Hi all, agenda to follow.\r
\r
________________________________________________________________________________\r
Microsoft Teams meeting\r
Join on your computer, mobile app or room device\r
Click here to join the meeting<https://teams.microsoft.com/l/meetup-join/19%3ameeting_ZmE3NDQxYjAt%40thread.v2/0?context=%7b%22Tid%22%3a%2272f988bf%22%7d>\r
Meeting ID: 234 567 890 123\r
Passcode: Qw9Rt2\r
Download Teams<https://www.microsoft.com/en-us/microsoft-teams/download-app> | Join on the web<https://www.microsoft.com/microsoft-teams/join-a-meeting>\r
Join with a video conferencing device\r
818472610@t.plcm.vc\r
Video Conference ID: 118 222 3344\r
Alternate VTC instructions<https://dialin.plcm.vc/teams/?key=818472610&conf=1182223344>\r
Or call in (audio only)\r
+1 323-555-0166,,987654321#   United States, Los Angeles\r
Phone Conference ID: 987 654 321#\r
Find a local number<https://dialin.teams.microsoft.com/8551f4c1?id=987654321> | Reset PIN<https://dialin.teams.microsoft.com/usp/pstnconferencing>\r
Learn More<https://aka.ms/JoinTeamsMeeting> | Meeting options<https://teams.microsoft.com/meetingOptions/?organizerId=4d2e&tenantId=72f9>\r
________________________________________________________________________________\r
";

const TEAMS_HTML: &str = r#"<html><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8"><style>p.MsoNormal{margin:0cm;font-family:"Calibri",sans-serif;} a:link{color:#0563C1}</style></head>
<body lang="EN-US"><div class="WordSection1"><p class="MsoNormal">Let&#39;s review the Q3 numbers &amp; plan.<o:p></o:p></p></div>
<div style="width:100%"><span style="white-space:nowrap;color:#5F5F5F">________________________________________________________________________________</span>
<div style="margin-bottom:24px"><span style="font-size:24px;font-weight:700">Microsoft Teams meeting</span></div>
<div><b>Join on your computer, mobile app or room device</b></div>
<div><a class="me-email-headline" href="https://teams.microsoft.com/l/meetup-join/19%3ameeting_OGI0NzE5%40thread.v2/0?context=%7b%22Tid%22%3a%2272f988bf%22%7d&amp;btype=a&amp;role=a" target="_blank" rel="noreferrer noopener">Click here to join the meeting</a></div>
<div style="margin-top:8px"><span style="font-size:14px">Meeting&nbsp;ID:&nbsp;</span><span style="font-size:16px">345&nbsp;678&nbsp;901&nbsp;234</span></div>
<div><span style="font-size:14px">Passcode&#58;&nbsp;</span><span style="font-size:16px">kT4mZ8</span></div>
<div style="margin-top:20px"><a href="https://www.microsoft.com/en-us/microsoft-teams/download-app">Download Teams</a> | <a href="https://www.microsoft.com/microsoft-teams/join-a-meeting">Join on the web</a></div>
<div><b>Or call in (audio only)</b></div>
<div><a href="tel:+13235550166,,123456789#">+1 323-555-0166,,123456789#</a> United States, Los Angeles</div>
<div>Phone Conference ID: 123 456 789#</div>
</div></body></html>"#;

const ZOOM_INVITE: &str = "Priya Raman is inviting you to a scheduled Zoom meeting.

Join Zoom Meeting
https://us02web.zoom.us/j/81234567890?pwd=bXlUb2tlbkFiY2RlZkdoaWprbG1ub3BxcnN0dXZ3.1

Meeting ID: 812 3456 7890
Passcode: hX7pQ2
---
One tap mobile
+16465558656,,81234567890#,,,,*482913# US (New York)
+13015550128,,81234567890#,,,,*482913# US (Washington DC)

---
Dial by your location
• +1 646 555 8656 US (New York)
• +1 301 555 0128 US (Washington DC)

Meeting ID: 812 3456 7890
Passcode: 482913

Find your local number: https://us02web.zoom.us/u/kbXyZ12

---
Join by SIP
• 81234567890@zoomcrc.com

Join by H.323
• 162.255.37.11 (US West)
• 162.255.36.11 (US East)
Meeting ID: 812 3456 7890
Passcode: 482913
";

const WEBEX_INVITE: &str = "Hello,

Daniel Okafor is inviting you to this Webex meeting.

Join meeting
https://acme.webex.com/acme/j.php?MTID=m3f1c2b7a9d8e6f5a4b3c2d1e0f9a8b7c

More ways to join:

Meeting number (access code): 2554 123 4567
Meeting password: Ab12Cd34 (22121234 from phones and video systems)

Join by video system
Dial 25541234567@acme.webex.com
You can also dial 173.243.2.68 and enter your meeting number.

Join by phone
+1-408-555-0199 United States Toll
Access code: 2554 123 4567
Host key: 908172
";

const BLUEJEANS_INVITE: &str = "To join the meeting on a computer or mobile phone: https://bluejeans.com/123456789?src=calendarLink

Maria Lopez has invited you to a video meeting.
-----------------------------------
Connecting directly from a room system?
1) Dial: 199.48.152.152 or bjn.vc
2) Enter Meeting ID: 123 456 789 -or- use the pairing code

Just want to dial in on your phone?
1) +1.408.740.7256 (US (San Jose))
   +1.888.240.2560 (US Toll Free)
   Global Numbers: https://www.bluejeans.com/numbers
2) Enter Meeting ID: 123 456 789
3) Press #
   Participant Passcode: 4321
   Moderator Passcode: 8765

Want to test your video connection?
https://bluejeans.com/111
";

const MEET_INVITE: &str = "Design review

Join with Google Meet
https://meet.google.com/abc-defg-hij

Join by phone
(US) +1 252-555-0199 PIN: 123 456 789#

More phone numbers: https://tel.meet/abc-defg-hij?pin=1234567890123
";

#[test]
fn invitations() {
    use FoundIn::{Conference, Description, Location};
    use MeetingType::{MeetMe, Teams, Webex, Zoom};
    let safelinked = r#"<p><a href="https://nam12.safelinks.protection.outlook.com/?url=https%3A%2F%2Fteams.microsoft.com%2Fmeet%2F2345678901234%3Fp%3DXy7Kq2&amp;data=05%7C02%7C&amp;reserved=0">Join the meeting now</a></p>"#;
    let webex_alpha_only = "Join: https://acme.webex.com/acme/j.php?MTID=m0a1b2c3d\nMeeting number: 2554 987 6543\nMeeting password: qWeRtY12\n";
    let teams_with_bluejeans = "Microsoft Teams meeting\nhttps://teams.microsoft.com/l/meetup-join/19%3ameeting_abc\nMeeting ID: 111 222 333 444\nPasscode: zZ9yY8\n\nRoom backup: https://bluejeans.com/555666777/2468\n";
    let cases: Vec<(&str, CalendarEvent, Detection)> = vec![
        (
            "Outlook Teams footer, plain text with CVI, dial-in and conference IDs",
            event(&[], Some("Microsoft Teams Meeting"), Some(TEAMS_PLAIN)),
            dial(Teams, "234567890123", Some("Qw9Rt2"), Description),
        ),
        (
            "Outlook Teams footer, HTML with entities",
            event(&[], None, Some(TEAMS_HTML)),
            dial(Teams, "345678901234", Some("kT4mZ8"), Description),
        ),
        (
            "Graph: joinUrl in conference_uris, meeting ID only in the HTML body",
            event(
                &["https://teams.microsoft.com/l/meetup-join/19%3ameeting_OGI0NzE5%40thread.v2/0"],
                None,
                Some("<div>Meeting ID: 456 789 012 345<br>Passcode: Vb6Nm3</div>"),
            ),
            dial(Teams, "456789012345", Some("Vb6Nm3"), Description),
        ),
        (
            "Teams link without any meeting ID",
            event(
                &["https://teams.microsoft.com/l/meetup-join/19%3ameeting_abc%40thread.v2/0"],
                None,
                Some("See you there"),
            ),
            not_dialable("a Teams link without a meeting ID"),
        ),
        (
            "Teams short link with its passcode, in the location",
            event(
                &[],
                Some("https://teams.microsoft.com/meet/2345678901234?p=Xy7Kq2"),
                None,
            ),
            dial(Teams, "2345678901234", Some("Xy7Kq2"), Location),
        ),
        (
            "Teams short link behind Outlook Safe Links",
            event(&[], None, Some(safelinked)),
            dial(Teams, "2345678901234", Some("Xy7Kq2"), Description),
        ),
        (
            "Zoom invite: pwd= ignored, the numeric passcode preferred",
            event(
                &[],
                Some("https://us02web.zoom.us/j/81234567890?pwd=bXlUb2tlbkFi"),
                Some(ZOOM_INVITE),
            ),
            dial(Zoom, "81234567890", Some("482913"), Location),
        ),
        (
            "Zoom link alone: pwd= is never a passcode",
            event(
                &["https://acme.zoom.us/j/81234567890?pwd=bXlUb2tlbkFi"],
                None,
                None,
            ),
            dial(Zoom, "81234567890", None, Conference),
        ),
        (
            "Zoom personal link without a meeting ID",
            event(&[], Some("https://acme.zoom.us/my/jdoe"), None),
            not_dialable("a Zoom link without a meeting ID"),
        ),
        (
            "Webex invite: numeric password, never the alphanumeric one",
            event(&[], None, Some(WEBEX_INVITE)),
            dial(Webex, "25541234567", Some("22121234"), Description),
        ),
        (
            "Webex invite with only an alphanumeric password",
            event(&[], None, Some(webex_alpha_only)),
            dial(Webex, "25549876543", None, Description),
        ),
        (
            "Webex link without a meeting number",
            event(&[], Some("https://acme.webex.com/meet/jdoe"), None),
            not_dialable("a Webex link without a meeting number"),
        ),
        (
            "BlueJeans URL with passcode",
            event(&[], Some("https://bluejeans.com/123456789/4321"), None),
            dial(MeetMe, "123456789", Some("4321"), Location),
        ),
        (
            "BlueJeans URL without passcode, /webrtc is a view",
            event(
                &[],
                Some("https://acme.bluejeans.com/123456789/webrtc"),
                None,
            ),
            dial(MeetMe, "123456789", None, Location),
        ),
        (
            "BlueJeans invite: first link, participant (not moderator) passcode",
            event(&[], None, Some(BLUEJEANS_INVITE)),
            dial(MeetMe, "123456789", Some("4321"), Description),
        ),
        (
            "BlueJeans SIP URI in conference data",
            event(
                &[
                    "tel:+1-408-555-0100;pin=123456789",
                    "sip:123456789.4321@sip.bjn.vc",
                ],
                None,
                None,
            ),
            dial(MeetMe, "123456789", Some("4321"), Conference),
        ),
        (
            "BlueJeans SIP address without a scheme",
            event(&[], Some("Room 4B / 987654321@bjn.vc"), None),
            dial(MeetMe, "987654321", None, Location),
        ),
        (
            "BlueJeans labels with a SIP domain mentioned, dashes in the id",
            event(
                &[],
                None,
                Some(
                    "From a room system dial bjn.vc\nMeeting ID: 123-456-789\nMeeting Passcode: 2468\n",
                ),
            ),
            dial(MeetMe, "123456789", Some("2468"), Description),
        ),
        (
            "query-form BlueJeans link",
            event(
                &[],
                Some("bluejeans.com/join?meeting_id=24681357&passcode=1357"),
                None,
            ),
            dial(MeetMe, "24681357", Some("1357"), Location),
        ),
        (
            "conference_uris beat another meeting in the description",
            event(
                &["https://bluejeans.com/111222333"],
                None,
                Some("Join Zoom Meeting https://zoom.us/j/99988877766"),
            ),
            dial(MeetMe, "111222333", None, Conference),
        ),
        (
            "this platform beats another vendor within one text",
            event(&[], None, Some(teams_with_bluejeans)),
            dial(MeetMe, "555666777", Some("2468"), Description),
        ),
        (
            "Google Meet only",
            event(&[], None, Some(MEET_INVITE)),
            not_dialable("a Google Meet link (rooms cannot dial Google Meet)"),
        ),
        (
            "Google Meet and a BlueJeans link",
            event(
                &[],
                None,
                Some(&format!(
                    "{MEET_INVITE}\nOr from a room: https://bluejeans.com/246813579"
                )),
            ),
            dial(MeetMe, "246813579", None, Description),
        ),
        (
            "Google Meet in conference data, BlueJeans in the description",
            event(
                &["https://meet.google.com/abc-defg-hij"],
                None,
                Some("Use https://bluejeans.com/246813579/1122"),
            ),
            dial(MeetMe, "246813579", Some("1122"), Description),
        ),
        (
            "SIP URI of an unknown domain",
            event(&[], Some("sip:boardroom@vc.example.com"), None),
            not_dialable("a SIP address at vc.example.com (rooms join by meeting ID only)"),
        ),
        (
            "no meeting: phone numbers and e-mail addresses are not meetings",
            event(
                &[],
                Some("Café Rouge, 2nd floor"),
                Some(
                    "Call me on +1 408 555 0100 or 408-555-0199, ext 1234567.\nQuestions: jdoe@example.com",
                ),
            ),
            Detection::Nothing,
        ),
        (
            "dial-in numbers next to a platform link without an id",
            event(
                &[],
                None,
                Some(
                    "Dial +1.408.740.7256, then enter 123456789#.\nNumbers: https://www.bluejeans.com/numbers",
                ),
            ),
            Detection::Nothing,
        ),
        (
            "a bare meeting ID names no platform",
            event(&[], None, Some("Meeting ID: 123 456 789\nPasscode: 4321")),
            Detection::Nothing,
        ),
        (
            "bad labelled passcode: dialled without it",
            event(
                &[],
                None,
                Some("https://bluejeans.com/123456789\nPasscode: 12-34"),
            ),
            dial(MeetMe, "123456789", None, Description),
        ),
        (
            "too long link passcode: dialled without it",
            event(
                &[],
                Some(&format!(
                    "https://bluejeans.com/123456789/{}",
                    "9".repeat(33)
                )),
                None,
            ),
            dial(MeetMe, "123456789", None, Location),
        ),
        (
            "passcode 'none' is no passcode; 21 digits is no meeting ID",
            event(
                &[],
                None,
                Some(
                    "bluejeans.com\nMeeting ID: 123 456 789 012 345 678 901\nMeeting ID: 135 792 468\nPasscode: none",
                ),
            ),
            dial(MeetMe, "135792468", None, Description),
        ),
        (
            "a moderator passcode written first is skipped",
            event(
                &[],
                None,
                Some(
                    "Room systems: bjn.vc\nMeeting ID: 123 456 789\nModerator Passcode: 8765\nParticipant Passcode: 4321",
                ),
            ),
            dial(MeetMe, "123456789", Some("4321"), Description),
        ),
        (
            "prose about a password is no passcode label",
            event(
                &[],
                None,
                Some("This meeting is password protected.\nhttps://bluejeans.com/123456789"),
            ),
            dial(MeetMe, "123456789", None, Description),
        ),
        (
            "cancelled",
            CalendarEvent {
                cancelled: true,
                ..event(&["https://bluejeans.com/123456789/4321"], None, None)
            },
            Detection::Nothing,
        ),
    ];
    assert!(cases.len() >= 18);
    for (name, event, expected) in cases {
        assert_eq!(detect(&event, &MeetingRules::default()), expected, "{name}");
    }
}

#[test]
fn rules_are_configurable_and_read_with_defaults() {
    let rules: MeetingRules = serde_json::from_str(
        r#"{"hosts": ["*.video.acme.test"], "sip_domains": ["sip.acme.test"]}"#,
    )
    .unwrap();
    assert_eq!(rules.teams_hosts, MeetingRules::default().teams_hosts);
    let e = event(&[], Some("https://eu.video.acme.test/5551234/99"), None);
    assert_eq!(
        detect(&e, &rules),
        dial(
            MeetingType::MeetMe,
            "5551234",
            Some("99"),
            FoundIn::Location
        )
    );
    let e = event(&[], Some("sip:5551234@SIP.ACME.TEST"), None);
    assert_eq!(
        detect(&e, &rules),
        dial(MeetingType::MeetMe, "5551234", None, FoundIn::Location)
    );
    let e = event(&[], Some("https://bluejeans.com/123456789"), None);
    assert_eq!(
        detect(&e, &rules),
        Detection::Nothing,
        "replaced hosts no longer match"
    );
    assert!(serde_json::from_str::<MeetingRules>(r#"{"host": ["x.test"]}"#).is_err());
    let from_text: MeetingRules =
        serde_json::from_str(r#"{"hosts": " video.corp.example, ,meet.corp.example"}"#).unwrap();
    assert_eq!(
        from_text.hosts,
        ["video.corp.example", "meet.corp.example"],
        "a comma-separated string, as an environment variable gives it"
    );
    assert_eq!(
        serde_json::to_string(&FoundIn::Conference).unwrap(),
        "\"conference\""
    );
    assert_eq!(
        serde_json::to_string(&FoundIn::Description).unwrap(),
        "\"description\""
    );
}

#[test]
fn html_is_stripped_to_text() {
    assert_eq!(strip_html("<o:p>x</o:p><sip:1@x.test>"), "x<sip:1@x.test>");
    assert_eq!(
        strip_html("<p>One</p><p>Two<br/>Three</p>"),
        "\nOne\n\nTwo\nThree\n"
    );
    assert_eq!(
        strip_html("a&amp;b &lt;c&gt; &quot;d&quot; x&nbsp;y https&#58;//z &#x3A;"),
        "a&b <c> \"d\" x y https://z :"
    );
    assert_eq!(
        strip_html("<STYLE>p{x:1}</STYLE><!-- hidden <b> -->kept"),
        "kept"
    );
    assert_eq!(
        strip_html("<html><head><title>T</title></head><body>B</body></html>"),
        "B"
    );
    assert_eq!(
        strip_html(
            r#"<a href="https://x.test/?a=1&amp;b=2">Join</a> <a href='mailto:j@x.test'>mail</a>"#
        ),
        " https://x.test/?a=1&b=2 Join mail"
    );
    assert_eq!(
        strip_html("<table><tr><td>ID:</td><td>123</td></tr></table>"),
        "\n\n ID:  123 \n\n"
    );
    assert_eq!(
        strip_html("Click<https://x.test/j/1> if a < b"),
        "Click<https://x.test/j/1> if a < b"
    );
    assert_eq!(
        strip_html("&bogus; &#xZZ; &#99999999999; & ;"),
        "&bogus; &#xZZ; &#99999999999; & ;"
    );
    assert_eq!(strip_html("x<b unterminated"), "x<b unterminated");
    assert_eq!(
        strip_html("line1\r\nline2\rline3\u{200b}"),
        "line1\nline2\nline3"
    );
}

#[test]
fn odd_input_never_panics() {
    let rules = MeetingRules::default();
    let pieces = [
        "é",
        "漢",
        "🎥",
        "\u{a0}",
        "<",
        ">",
        "&",
        "#",
        ";",
        "@",
        ":",
        "/",
        ".",
        "-",
        "?",
        "=",
        "(",
        ")",
        "\n",
        " ",
        "1",
        "99",
        "a",
        "sip:",
        "https://",
        "bluejeans.com",
        "zoom.us/j/",
        "meeting id",
        "passcode:",
        "&#",
        "<a href=",
        "\"",
        "<!--",
        "<style>",
        "%",
        "%E2",
        "bjn.vc",
        "teams.microsoft.com/meet/",
        "safelinks.protection.outlook.com/?url=",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..400 {
        let mut text = String::new();
        for _ in 0..60 {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            text.push_str(pieces[usize::try_from(seed >> 33).unwrap() % pieces.len()]);
        }
        let e = event(&[&text], Some(&text), Some(&text));
        let _ = detect(&e, &rules);
    }
    let long = [
        "9".repeat(200_000),
        "passcode:".repeat(30_000),
        "Meeting ID: 1 bjn.vc ".repeat(10_000),
        "<a <a <a ".repeat(30_000),
        "<!--".repeat(50_000),
        "&#".repeat(100_000),
        format!("sip:{}@x.test", "1".repeat(100_000)),
        format!("https://bluejeans.com/{}", "é".repeat(100_000)),
        "🎥@bjn.vc ".repeat(20_000),
    ];
    for text in &long {
        let e = event(&[text], Some(text), Some(text));
        let _ = detect(&e, &rules);
    }
    let mut bytes: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    bytes.extend_from_slice(b"https://bluejeans.com/1/2");
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let e = event(&[&text], Some(&text), Some(&text));
    assert_eq!(
        detect(&e, &rules),
        dial(MeetingType::MeetMe, "1", Some("2"), FoundIn::Conference)
    );
}
